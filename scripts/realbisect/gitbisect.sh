#!/usr/bin/env bash
# gitbisect.sh REPO GOOD BAD [COUNTER]
#
# The baseline: plain `git bisect run` with RB_RUNS (5) benchmark runs a
# step. It clones REPO afresh into $RB_TMP/run-gitbisect, measures both
# ends first (RB_RUNS runs each, counted), takes the threshold midway
# between the two medians, and lets git bisect run a step script that
# builds the commit, runs the benchmark RB_RUNS times and calls the commit
# good when its median lies on the good end's side of the threshold (works
# for either direction of change). A commit that does not build, or whose
# benchmark prints no number, is skipped (exit 125).
#
# Every benchmark run appends "gitbisect" to COUNTER (default
# $RB_TMP/runs.txt). Prints one summary line:
#   gitbisect runs=N builds=B wall=S culprit=SHA subject=SUBJECT good=M bad=M threshold=T build_s=X bench_s=Y
# (build_s and bench_s: the seconds its builds and its benchmark runs took)
# and the bisect log on stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/case.sh"

if [ "${1:-}" = --step ]; then
	# git bisect run calls this at each step, in the clone.
	dir=$(pwd)
	echo build >> "$RB_BUILDS"
	t0=$(rb_now)
	if ! rb_build "$dir" > "$RB_WORK/build.log" 2>&1; then
		echo "step $(git rev-parse --short HEAD) $(git log -1 --format=%s): build failed, skip" >&2
		exit 125
	fi
	t1=$(rb_now)
	if ! m=$(rb_measure "$dir" "$RB_COUNTER" gitbisect); then
		echo "step $(git rev-parse --short HEAD): no benchmark value, skip" >&2
		exit 125
	fi
	echo "$t0 $t1 $(rb_now)" >> "$RB_WORK/times"
	side=$(awk -v m="$m" -v g="$RB_GOOD_MEDIAN" -v b="$RB_BAD_MEDIAN" \
		'BEGIN { d1 = m - g; if (d1 < 0) d1 = -d1; d2 = m - b; if (d2 < 0) d2 = -d2; print (d1 <= d2) ? "good" : "bad" }')
	echo "step $(git rev-parse --short HEAD) $(git log -1 --format=%s): median $m -> $side" >&2
	[ "$side" = good ]
	exit $?
fi

if [ $# -lt 3 ]; then
	echo "usage: $0 REPO GOOD BAD [COUNTER]" >&2
	exit 1
fi
repo=$(cd "$1" && pwd) good=$2 bad=$3
counter=${4:-$RB_TMP/runs.txt}
mkdir -p "$(dirname "$counter")"
touch "$counter"
counter=$(cd "$(dirname "$counter")" && pwd)/$(basename "$counter")

start=$(rb_now)
work=$RB_TMP/run-gitbisect
rm -rf "$work"
mkdir -p "$work"
git clone -q "$repo" "$work/repo"
cd "$work/repo"
good=$(git rev-parse --verify "$good^{commit}")
bad=$(git rev-parse --verify "$bad^{commit}")
runs_before=$(wc -l < "$counter")
: > "$work/builds"
: > "$work/times"

ends() { # ends REV: build and measure one end
	local t0 t1
	git checkout -q "$1"
	echo build >> "$work/builds"
	t0=$(rb_now)
	rb_build "$work/repo" > "$work/build.log" 2>&1 || { echo "gitbisect: $1 does not build" >&2; cat "$work/build.log" >&2; exit 2; }
	t1=$(rb_now)
	rb_measure "$work/repo" "$counter" gitbisect || { echo "gitbisect: $1 gives no benchmark value" >&2; exit 2; }
	echo "$t0 $t1 $(rb_now)" >> "$work/times"
}
mg=$(ends "$good")
mb=$(ends "$bad")
threshold=$(awk -v g="$mg" -v b="$mb" 'BEGIN { print (g + b) / 2 }')
echo "gitbisect: good $mg, bad $mb $RB_UNIT (median of $RB_RUNS), threshold $threshold" >&2

export RB_GOOD_MEDIAN=$mg RB_BAD_MEDIAN=$mb RB_COUNTER=$counter RB_WORK=$work RB_BUILDS=$work/builds
git bisect start "$bad" "$good" > /dev/null
git bisect run "$here/gitbisect.sh" --step > "$work/bisect-run.log" 2>&1 || {
	cat "$work/bisect-run.log" >&2
	echo "gitbisect: git bisect run failed" >&2
	exit 2
}
culprit=$(git rev-parse refs/bisect/bad)
subject=$(git log -1 --format=%s "$culprit")
git bisect log >&2 || true
git bisect reset -q "$bad" 2> /dev/null || true
end=$(rb_now)
runs=$(($(wc -l < "$counter") - runs_before))
builds=$(wc -l < "$work/builds")
wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
# the seconds spent building and running the benchmark (start, built, measured per commit)
spent=$(awk '{ b += $2 - $1; r += $3 - $2 } END { printf "build_s=%.1f bench_s=%.1f", b, r }' "$work/times")
echo "gitbisect runs=$runs builds=$builds wall=${wall}s culprit=$culprit subject=$subject good=$mg bad=$mb threshold=$threshold $spent"
