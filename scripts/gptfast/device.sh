#!/usr/bin/env bash
# device.sh STEP...: gpt-fast under perfbot on a machine with a CUDA GPU, one
# step per call (each well under ten minutes), resumable: the work
# directory's state (the store, the watched repository's branch) is saved
# to $OUT/state.tgz after each step and restored from $STATE when given.
# Run from perfbot's repository root with a static perfbot binary
# ($PERFBOT) and a repository made by history.sh, as a git bundle ($BUNDLE).
#
#   setup      clone the history, print its manifest, run bench.py twice at
#              the culprit's parent and the culprit, in turn (timed), then perfbot
#              measure the root $MEASURE (10) times and the coefficient of
#              variation of each metric
#   bisect     perfbot bisect --hunks from the root to the head
#   gitbisect  git bisect run, 5 runs of bench.py a step, over the same range
#   nightly    replay nights: each night runs perfbot nightly --no-work and
#              perfbot work, then moves the watched branch on by $STEP (3)
#              commits, from commit $START (10); $NIGHTS (12) nights a call
#   server     perfbot measure the serving benchmark 5 times at the head,
#              then perfbot bisect it from the culprit to the head
#
# What each step prints goes to $OUT/STEP.txt as well.
set -euo pipefail
ROOT=$(pwd)
P=${PERFBOT:-$ROOT/.device/gptfast/perfbot}
BUNDLE=${BUNDLE:-$ROOT/.device/gptfast/history.bundle}
W=${W:-/tmp/gfw}
OUT=${OUT:-/tmp/gfout}
LIMIT=${LIMIT:-540}
# A device call is killed at its limit without a chance to save the state:
# every step stops by END (CALL seconds from the start) with time to spare.
END=$(( $(date +%s) + ${CALL:-570} ))
left() { local l=$(( END - $(date +%s) - 20 )); [ "$l" -lt "$LIMIT" ] || l=$LIMIT; [ "$l" -gt 1 ] || l=1; echo "$l"; }
export GPTFAST_SCRIPTS=$ROOT/scripts/gptfast PATH=$(dirname "$P"):$PATH
mkdir -p "$OUT"
keep() { tee -a "$OUT/$1"; }
m() { awk -v k="$1" '$1 == k { print $2 }' "$W/gpt-fast/manifest.txt"; }

if [ ! -d "$W/gpt-fast" ]; then
	mkdir -p "$W"
	if [ -n "${STATE:-}" ] && [ -f "$STATE" ]; then tar -xzf "$STATE" -C "$W"; fi
	[ -d "$W/gpt-fast" ] || git clone -q "$BUNDLE" "$W/gpt-fast"
	git -C "$W/gpt-fast" checkout -q main
	[ -f "$W/gpt-fast/manifest.txt" ] || cp "$(dirname "$BUNDLE")/manifest.txt" "$W/gpt-fast/"
	cp configs/gptfast.yaml "$W/perfbot.yaml"
	mkdir -p "$W/serve" && cp configs/gptfast-server.yaml "$W/serve/perfbot.yaml"
	sed -i 's|url: ./gpt-fast|url: ../gpt-fast|' "$W/serve/perfbot.yaml"
fi
save() { (cd "$W" && tar -czf "$OUT/state.tgz" --exclude='*/work/*' gpt-fast/.git gpt-fast/manifest.txt gb.med gb.runs .perfbot serve/.perfbot nightly watched 2>/dev/null || true); }
trap save EXIT

cv() { # cv: the CV of each metric over the runs of perfbot history --json on stdin
	python3 -c '
import json, statistics, sys
rows = json.load(sys.stdin)
by = {}
for r in rows:
    if r["status"] == "ok":
        by.setdefault(r["metric"], []).append(r["value"])
for k, v in sorted(by.items()):
    print(f"{k}: n={len(v)} median={statistics.median(v):.4g} cv={100*statistics.stdev(v)/statistics.mean(v):.2f}%")'
}

step() {
case "$1" in
setup)
	cd "$W"
	{ cat gpt-fast/manifest.txt; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv || true; } | keep setup.txt
	for rev in culprit~1 culprit culprit~1 culprit; do
		c=$(m "${rev%~1}"); [ "$rev" = culprit~1 ] && c=$(git -C gpt-fast rev-parse "$c~1")
		git -C gpt-fast checkout -q "$c"
		echo "== $rev $c"
		(cd gpt-fast && TIMEFORMAT='%R s wall' && time python3 "$GPTFAST_SCRIPTS/bench.py") 2>&1
	done | keep setup.txt
	git -C gpt-fast checkout -q main
	# The spread of 10 runs at the root, in a store of its own so that the
	# bisection starts from nothing; MEASURE=0 leaves it out.
	n=${MEASURE:-10}
	if [ "$n" -gt 0 ]; then
		TIMEFORMAT='perfbot measure: %R s wall'
		{ time "$P" measure "$(m root)" --repeats "$n"; } 2>&1 | keep setup.txt
		"$P" history --json > "$OUT/history-root.json"
		cv < "$OUT/history-root.json" | keep setup.txt
		mv .perfbot/perfbot.db .perfbot/spread.db
	fi
	;;
bisect)
	cd "$W"
	TIMEFORMAT='perfbot bisect: %R s wall'
	{ time timeout -s TERM "$(left)" "$P" bisect --good "$(m root)" --bad "$(m head)" --hunks; } 2>&1 | keep bisect.txt || true
	"$P" findings --json > "$OUT/findings.json" 2>/dev/null || true
	;;
gitbisect)
	cd "$W"
	runs=${RUNS:-5}
	rm -rf gb && git clone -q gpt-fast gb && cd gb
	# gb-med.sh: the median decode tok/s of $runs runs of bench.py in the
	# current tree, kept in $W/gb.med with the seconds it took, so that a
	# later call resumes where a killed one stopped. (A script, not a
	# function: git bisect run starts its command through sh.)
	cat > ../gb-med.sh <<S
#!/usr/bin/env bash
c=\$(git rev-parse HEAD)
v=\$(awk -v c="\$c" '\$1 == c { print \$2; exit }' "$W/gb.med")
if [ -n "\$v" ]; then echo "\$v"; exit 0; fi
t0=\$(date +%s.%N)
v=\$(for i in \$(seq $runs); do
	echo "\$c" >> "$W/gb.runs"
	python3 "$GPTFAST_SCRIPTS/bench.py" | awk '\$1 == "BenchmarkDecode" { print \$3 }'
done | sort -g | awk '{ v[NR] = \$1 } END { if (NR == 0) exit 1; print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }') || exit 1
echo "\$c \$v \$(awk -v a="\$(date +%s.%N)" -v b="\$t0" 'BEGIN { print a - b }')" >> "$W/gb.med"
echo "\$v"
S
	chmod +x ../gb-med.sh
	touch "$W/gb.runs" "$W/gb.med"
	git checkout -q "$(m root)"; good=$(../gb-med.sh)
	git checkout -q "$(m head)"; bad=$(../gb-med.sh)
	echo "good end $good tok/s, bad end $bad tok/s (medians of $runs)" | keep gitbisect.txt
	cat > ../gb-step.sh <<S
#!/usr/bin/env bash
python3 -m py_compile model.py generate.py || exit 125
v=\$(../gb-med.sh) || exit 125
echo "step \$(git rev-parse --short HEAD): median \$v" >&2
awk -v m="\$v" -v g="$good" -v b="$bad" 'BEGIN { d1 = m - g; if (d1 < 0) d1 = -d1; d2 = m - b; if (d2 < 0) d2 = -d2; exit (d1 <= d2) ? 0 : 1 }'
S
	chmod +x ../gb-step.sh
	git bisect start "$(m head)" "$(m root)" > /dev/null
	timeout -s TERM "$(left)" git bisect run ../gb-step.sh 2>&1 | keep gitbisect.txt || true
	# Until git bisect names the first bad commit, refs/bisect/bad is only
	# the lowest bad commit so far: a cut bisection names no culprit (the
	# next call resumes from gb.med).
	culprit="none (cut by the call's limit before it finished)"
	git bisect log | grep -q '^# first bad commit' && culprit=$(git rev-parse refs/bisect/bad)
	echo "git bisect run: runs=$(wc -l < "$W/gb.runs") wall=$(awk '{ s += $3 } END { print s }' "$W/gb.med") s (the steps' runs) culprit=$culprit injected=$(m culprit)" | keep gitbisect.txt
	;;
nightly)
	cd "$W"
	step=${STEP:-3} nights=${NIGHTS:-12}
	if [ ! -d watched ]; then
		git clone -q --bare gpt-fast watched
		git -C watched update-ref refs/heads/main "$(git -C gpt-fast rev-list --reverse main | sed -n "${START:-10}p")"
		mkdir -p nightly && sed 's|url: ./gpt-fast|url: ../watched|' perfbot.yaml > nightly/perfbot.yaml
	fi
	cd nightly
	for n in $(seq "$nights"); do
		tip=$(git -C ../watched rev-parse main)
		pos=$(git -C ../gpt-fast rev-list --reverse main | grep -n "$tip" | cut -d: -f1)
		# A night is measured (perfbot nightly --no-work), then its jobs
		# are worked off (perfbot work); .working marks a night measured
		# whose jobs a call's end cut short: the next call works them off
		# (they resume from their recorded runs) before the branch moves.
		if [ ! -f .working ]; then
			# A night cut short would be measured again: one that
			# cannot finish is left to the next call. NIGHT_S: what
			# measuring a night may take.
			if [ "$(left)" -lt "${NIGHT_S:-240}" ]; then
				echo "=== no time left for another night; the next call goes on" | keep nightly.txt
				break
			fi
			echo "=== night at commit $pos/$(m commits) $(git -C ../gpt-fast log -1 --format='%h %s' "$tip") $(date -u +%T)" | keep nightly.txt
			TIMEFORMAT='perfbot nightly: %R s wall'
			rc=0
			{ time timeout -s TERM "$(left)" "$P" nightly --no-work; } > night.log 2>&1 || rc=$?
			tail -n 40 night.log | keep nightly.txt
			cat night.log >> "$OUT/nightly-full.txt"
			if [ "$rc" = 124 ]; then
				echo "=== the night was cut by the time limit; the next call measures it again" | keep nightly.txt
				break
			fi
			touch .working
		else
			echo "=== the jobs of the night at commit $pos, resumed $(date -u +%T)" | keep nightly.txt
		fi
		TIMEFORMAT='perfbot work: %R s wall'
		rc=0
		{ time timeout -s TERM "$(left)" "$P" work; } > work.log 2>&1 || rc=$?
		tail -n 60 work.log | keep nightly.txt
		cat work.log >> "$OUT/nightly-full.txt"
		if [ "$rc" = 124 ]; then
			echo "=== the night's jobs were cut by the time limit; the next call resumes them" | keep nightly.txt
			break
		fi
		rm -f .working
		next=$(git -C ../gpt-fast rev-list --reverse main | sed -n "$((pos + step))p")
		[ -n "$next" ] || break
		git -C ../watched update-ref refs/heads/main "$next"
	done
	"$P" findings 2>&1 | keep nightly.txt || true
	ls .perfbot/issues 2>/dev/null | keep nightly.txt || true
	cp .perfbot/issues/*.md "$OUT/" 2>/dev/null || true
	;;
server)
	cd "$W/serve"
	TIMEFORMAT='perfbot measure (server): %R s wall'
	{ time "$P" measure "$(m head)" --repeats 5; } 2>&1 | keep server.txt
	"$P" history --json > "$OUT/history-server.json"
	cv < "$OUT/history-server.json" | keep server.txt
	TIMEFORMAT='perfbot bisect (server): %R s wall'
	{ time timeout -s TERM "$(left)" "$P" bisect --good "$(m culprit)" --bad "$(m head)" --hunks; } 2>&1 | keep server.txt || true
	;;
*)
	sed -n '2,22p' "$0" >&2
	exit 2
	;;
esac
}

[ $# -gt 0 ] || set -- help
for s in "$@"; do (step "$s") || echo "device.sh: step $s failed" >&2; done
