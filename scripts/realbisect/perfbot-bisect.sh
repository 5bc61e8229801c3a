#!/usr/bin/env bash
# perfbot-bisect.sh REPO GOOD BAD [COUNTER]
#
# One perfbot bisection from scratch: a fresh store under
# $RB_TMP/run-perfbot (so it reuses no measurement and no build: which tree
# holds what built is known only to the process that built it), the
# configuration perfbot.yaml filled in for the case (rb_config), then
#   $PERFBOT bisect --good GOOD --bad BAD --direction $RB_DIRECTION --json
# (RB_DIRECTION: the case's, cases/*.sh).
# perfbot's clone of REPO (its workdir) is kept from one bisection to the
# next, as a workspace is: perfbot clones through the git protocol, which
# takes 15 to 20 s for this 92 MB history on a loaded host, where git
# bisect's `git clone` of a local path hard-links in about a second.
# RB_FRESH_CLONE=1 clones afresh every time.
# Every benchmark run appends "perfbot" to COUNTER (default
# $RB_TMP/runs.txt). The JSON report is kept in $RB_TMP/run-perfbot/report.json
# and perfbot's debug log (-v) in stderr.log beside it. Prints one summary
# line:
#   perfbot runs=N reported_runs=R builds=B wall=S culprit=SHA[,SHA] subject=SUBJECT[+SUBJECT] verdict=V confidence=C ... phases=... build_s=X bench_s=Y
# where culprit and subject list every culprit in chain order (a range may
# hold two changes), confidence is the least of theirs, and phases,
# build_s and bench_s say where the runs and the wall time went (trace.awk).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/case.sh"

if [ $# -lt 3 ]; then
	echo "usage: $0 REPO GOOD BAD [COUNTER]" >&2
	exit 1
fi
repo=$(cd "$1" && pwd) good=$2 bad=$3
counter=${4:-$RB_TMP/runs.txt}
mkdir -p "$(dirname "$counter")"
touch "$counter"
counter=$(cd "$(dirname "$counter")" && pwd)/$(basename "$counter")
# perfbot resolves revisions in its own clone; hand it full hashes
good=$(git -C "$repo" rev-parse --verify "$good^{commit}")
bad=$(git -C "$repo" rev-parse --verify "$bad^{commit}")

start=$(rb_now)
work=$RB_TMP/run-perfbot
if [ "${RB_FRESH_CLONE:-0}" = 1 ]; then
	rm -rf "$work"
else
	# everything but the workdir (.perfbot/work)
	rm -rf "$work/.perfbot/perfbot.db" "$work/.perfbot/issues" "$work"/*.json "$work"/*.log "$work/perfbot.yaml"
fi
mkdir -p "$work"
rb_config "$repo" "$counter" > "$work/perfbot.yaml"
runs_before=$(wc -l < "$counter")
if ! "$PERFBOT" -v bisect --config "$work/perfbot.yaml" --good "$good" --bad "$bad" \
	--direction "$RB_DIRECTION" --json > "$work/report.json" 2> "$work/stderr.log"; then
	tail -n 30 "$work/stderr.log" >&2
	echo "perfbot-bisect: perfbot bisect failed" >&2
	exit 2
fi
end=$(rb_now)
runs=$(($(wc -l < "$counter") - runs_before))
wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
trace=$(awk -v runs="$runs" -f "$here/trace.awk" "$work/stderr.log")
jq -r --arg runs "$runs" --arg wall "$wall" --arg trace "$trace" '
	"perfbot runs=\($runs) reported_runs=\(.runs) builds=\(.builds) wall=\($wall)s culprit=\([.culprits[]?.commit[0:10]] | join(",") | if . == "" then "none" else . end) subject=\([.culprits[]?.subject] | join("+") | if . == "" then "-" else . end) verdict=\(.verdict) confidence=\([.culprits[]?.confidence] | min // 0) good=\(.good.median) bad=\(.bad.median) \($trace)"
' "$work/report.json"
