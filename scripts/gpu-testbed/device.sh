#!/usr/bin/env bash
# device.sh STEP: the GPU testbed on the machine that has the GPU, one step
# per call (each well under ten minutes). Run from perfbot's repository root
# with a static perfbot binary (CGO_ENABLED=0 go build -o bin/perfbot
# ./cmd/perfbot) and python3 with torch; nothing else is needed.
#
#   setup      generate the testbed in $W, print the manifest, run the
#              repository's unit tests (CPU) and bench/run.py at the root,
#              before and at change a, at the head, and at the root with
#              TESTBED_CUDA_GRAPHS=0
#   measure    perfbot measure the root and the head, $REPEATS runs each
#   bisect     perfbot bisect --hunks from the root to the head; stopped at
#              $LIMIT seconds, the same call goes on from the store
#   changes    perfbot bisect --hunks of each injected change in its own
#              range ($PARTS, default "c b d a": root..b~1, c..d~1,
#              b..a~1 as an improvement, d..HEAD), $LIMIT seconds each
#   envbisect  perfbot envbisect at change a's parent between
#              TESTBED_CUDA_GRAPHS=1 and =0 (and two variables that do not matter)
#
# Copies of the manifest and of what each step prints go to $OUT when set.
set -euo pipefail
P="${PERFBOT:-$PWD/bin/perfbot}"
W="${W:-/tmp/gt}"
REPEATS="${REPEATS:-5}"
LIMIT="${LIMIT:-560}"
OUT="${OUT:-}"
manifest="$W/gpu-testbed.manifest.json"

change() { # change ID FIELD: a field of a change of the manifest
	python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(next(c[sys.argv[3]] for c in m["changes"] if c["id"]==sys.argv[2]))' "$manifest" "$1" "$2"
}
keep() { # keep NAME: tee stdin to $OUT/NAME
	if [ -n "$OUT" ]; then tee "$OUT/$1"; else cat; fi
}
root() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["root"])' "$manifest"; }

case "${1:-}" in
setup)
	rm -rf "$W" && mkdir -p "$W"
	cp configs/gpu-testbed.yaml "$W/perfbot.yaml"
	"$P" testbed init --gpu "$W/gpu-testbed" | keep init.txt
	[ -z "$OUT" ] || cp "$manifest" "$OUT/"
	a=$(change a commit)
	for rev in "$(root)" "$a~1" "$a" HEAD; do
		sha=$(git -C "$W/gpu-testbed" rev-parse "$rev")
		git -C "$W/gpu-testbed" worktree add -q --detach "$W/w-$sha" "$sha"
	done
	(cd "$W/w-$(git -C "$W/gpu-testbed" rev-parse HEAD)" && python3 -m unittest discover tests 2>&1 | tail -3)
	{
		for rev in "$(root)" "$a~1" "$a" HEAD; do
			sha=$(git -C "$W/gpu-testbed" rev-parse "$rev")
			echo "== $rev ($sha)"
			(cd "$W/w-$sha" && TIMEFORMAT='%R s wall' && time python3 bench/run.py) 2>&1
		done
		echo "== root with TESTBED_CUDA_GRAPHS=0"
		(cd "$W/w-$(root)" && TIMEFORMAT='%R s wall' && time TESTBED_CUDA_GRAPHS=0 python3 bench/run.py) 2>&1
	} | keep bench-raw.txt
	;;
measure)
	cd "$W" && "$P" measure "$(root)" HEAD --repeats "$REPEATS" 2>&1 | keep measure.txt
	;;
bisect)
	cd "$W" && timeout -s TERM "$LIMIT" "$P" bisect --good "$(root)" --bad HEAD --hunks 2>&1 | keep bisect.txt
	;;
changes)
	cd "$W"
	for part in ${PARTS:-c b d a}; do
		dir=regression
		case $part in
		c) good=$(root) bad="$(change b commit)~1" ;;
		b) good=$(change c commit) bad="$(change d commit)~1" ;;
		d) good=$(change b commit) bad="$(change a commit)~1" dir=improvement ;;
		a) good=$(change d commit) bad=HEAD ;;
		*) echo "device.sh: no change $part" >&2; exit 2 ;;
		esac
		bad=$(git -C "$W/gpu-testbed" rev-parse "$bad")
		echo "== $part: $good..$bad ($dir)"
		timeout -s TERM "$LIMIT" "$P" bisect --good "$good" --bad "$bad" --direction "$dir" --hunks 2>&1 | keep "bisect-$part.txt" || true
	done
	;;
envbisect)
	cd "$W"
	printf 'TESTBED_CUDA_GRAPHS=1\nNCCL_PROTO=Simple\nTESTBED_WARMUP=20\n' > good.env
	printf 'TESTBED_CUDA_GRAPHS=0\nNCCL_PROTO=LL\nTESTBED_WARMUP=30\n' > bad.env
	timeout -s TERM "$LIMIT" "$P" envbisect --rev "$(change a parent)" --good-env good.env --bad-env bad.env 2>&1 | keep envbisect.txt
	;;
*)
	sed -n '2,20p' "$0" >&2
	exit 2
	;;
esac
