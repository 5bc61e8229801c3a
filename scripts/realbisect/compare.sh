#!/usr/bin/env bash
# compare.sh REPO [GOOD BAD [PAIRS]]
#
# Runs perfbot and the git-bisect-run baseline on the same history, in
# turn (perfbot, git bisect, perfbot, git bisect, ... PAIRS pairs; default
# 1), each from scratch (fresh clone; perfbot gets a fresh store, so it
# reuses no measurement), and prints for each run the benchmark runs it
# took (counted by the benchmark commands themselves, in
# $RB_TMP/compare-runs.txt), its builds, its wall time and the commits it
# named (every culprit, in chain order), then per tool the median and range of runs and wall time. Each
# bisection's report and log are kept in $RB_TMP/pair-I-TOOL.
#
# GOOD and BAD default to the case's ends, RB_GOOD and RB_BAD (tags made
# by make-history.sh). Wall time is measured by the scripts (date); to time
# them with another tool, wrap perfbot-bisect.sh and gitbisect.sh directly.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/case.sh"

if [ $# -lt 1 ]; then
	echo "usage: $0 REPO [GOOD BAD [PAIRS]]" >&2
	exit 1
fi
repo=$1 good=${2:-$RB_GOOD} bad=${3:-$RB_BAD} pairs=${4:-1}
counter=$RB_TMP/compare-runs.txt
log=$RB_TMP/compare.log
mkdir -p "$RB_TMP"
: > "$counter"
: > "$log"
want=$(git -C "$repo" log -1 --format='%h %s' "$RB_EXPECT" 2> /dev/null || echo "?")
# When, with which perfbot and on which host: a results file kept for the
# figures page starts with these lines.
rev=$(go version -m "$PERFBOT" 2> /dev/null | awk '$1 == "build" { split($2, kv, "=") } kv[1] == "vcs.revision" { r = substr(kv[2], 1, 7) } kv[1] == "vcs.modified" && kv[2] == "true" { m = " (modified)" } END { print (r == "" ? "of unknown commit (built without -buildvcs=true)" : r) m }')
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), perfbot $rev, case $RB_CASE, $(nproc) CPUs $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), load $(cut -d' ' -f1-3 /proc/loadavg) at the start"
echo "repo $repo: $good..$bad ($(git -C "$repo" rev-list --count "$good..$bad") commits), expected culprit $want"
echo "benchmark $RB_BENCH in $RB_PKG, $RB_BENCHTIME a run, unit $RB_UNIT; git bisect: $RB_RUNS runs a step"
echo

results=$RB_TMP/compare-results.txt
: > "$results"
for i in $(seq "$pairs"); do
	for tool in perfbot gitbisect; do
		if [ $tool = perfbot ]; then
			line=$("$here/perfbot-bisect.sh" "$repo" "$good" "$bad" "$counter" 2>> "$log") || line="perfbot FAILED"
		else
			line=$("$here/gitbisect.sh" "$repo" "$good" "$bad" "$counter" 2>> "$log") || line="gitbisect FAILED"
		fi
		# each bisection's own record: report and debug log, or the bisect log
		keep=$RB_TMP/pair-$i-$tool
		rm -rf "$keep" && mkdir -p "$keep"
		cp "$RB_TMP/run-$tool"/*.json "$RB_TMP/run-$tool"/*.log "$keep"/ 2> /dev/null || true
		echo "$line" | tee -a "$results" | awk -v i="$i" '{
			printf "pair %s  %-9s", i, $1
			for (k = 2; k <= NF; k++) {
				split($k, kv, "=")
				if (kv[1] == "runs" || kv[1] == "builds" || kv[1] == "wall" || kv[1] == "verdict" || kv[1] == "build_s" || kv[1] == "bench_s" || kv[1] == "phases") printf "  %s=%s", kv[1], kv[2]
				if (kv[1] == "culprit") {
					m = split(kv[2], cs, ",")
					printf "  culprit="
					for (c = 1; c <= m; c++) printf "%s%s", (c > 1 ? "," : ""), substr(cs[c], 1, 10)
				}
				if (kv[1] == "subject") printf " (%s)", kv[2]
			}
			print ""
		}'
	done
done
echo
awk '
	{ t = $1; for (k = 2; k <= NF; k++) { split($k, kv, "="); v[kv[1]] = kv[2] }
	  sub(/s$/, "", v["wall"]); n[t]++; runs[t, n[t]] = v["runs"]; wall[t, n[t]] = v["wall"]; subj[t] = subj[t] " " v["subject"] }
	# med: the median of a[t, 1..m] followed by its range, "M [MIN, MAX]"
	function med(a, t, m,   i, j, x, s) {
		for (i = 1; i <= m; i++) s[i] = a[t, i] + 0
		for (i = 2; i <= m; i++) for (j = i; j > 1 && s[j-1] > s[j]; j--) { x = s[j]; s[j] = s[j-1]; s[j-1] = x }
		return sprintf("%g [%g, %g]", (m % 2) ? s[(m+1)/2] : (s[m/2] + s[m/2+1]) / 2, s[1], s[m])
	}
	END { for (t in n) printf "%-9s  runs %s  wall %s s  named:%s\n", t, med(runs, t, n[t]), med(wall, t, n[t]), subj[t] }
' "$results" | sort
echo "(logs: $log; perfbot report: $RB_TMP/run-perfbot/report.json; git bisect: $RB_TMP/run-gitbisect/bisect-run.log)"
