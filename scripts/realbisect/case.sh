# case.sh: the benchmark of the case, shared by gitbisect.sh and
# perfbot-bisect.sh (sourced, not run); perfbot.yaml is filled from the
# same values. RB_CASE names a file of cases/ that sets them for one
# module (default compress); every value may be overridden from the
# environment.
: "${RB_CASE:=compress}"
. "$(dirname "${BASH_SOURCE[0]}")/cases/$RB_CASE.sh"

# runs per measured commit (git bisect baseline) and per end
: "${RB_RUNS:=5}"
# the perfbot binary (built once: go build -o /tmp/perfbot-real ./cmd/perfbot)
: "${PERFBOT:=/tmp/perfbot-real}"
# scratch space
: "${RB_TMP:=/tmp/realbisect}"

export GOFLAGS=-mod=mod GOPROXY=off

# rb_build DIR: build the benchmark binary DIR/.rb-bench.test. -trimpath
# keeps the source directory out of the build cache's keys, so a version
# built once is a cache hit in any directory: perfbot builds in several
# worktrees (a version may land in any of them), git bisect in one clone.
# Without it, perfbot recompiled every version it met in a new tree (20 to
# 60 s a build on the loaded host) where git bisect linked cached packages.
rb_build() {
	(cd "$1" && go test -trimpath -vet=off -c -o .rb-bench.test "$RB_PKG")
}

# rb_run DIR COUNTER TAG: one benchmark run; prints the value in RB_UNIT and
# appends TAG to COUNTER
rb_run() {
	echo "$3" >> "$2"
	(cd "$1/$RB_PKG" && "$1/.rb-bench.test" -test.run '^$' -test.bench "$RB_BENCH" \
		-test.benchtime "$RB_BENCHTIME" -test.count 1) |
		awk -v u="$RB_UNIT" '/^Benchmark/ { for (i = 3; i < NF; i++) if ($(i+1) == u) { print $i; exit } }'
}

# rb_median: the median of the numbers on stdin
rb_median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) exit 1; if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2] + v[NR/2+1]) / 2 }'
}

# rb_measure DIR COUNTER TAG: RB_RUNS runs; prints their median
rb_measure() {
	local i v out=""
	for i in $(seq "$RB_RUNS"); do
		v=$(rb_run "$@") || return 1
		[ -n "$v" ] || return 1
		out="$out$v"$'\n'
	done
	printf '%s' "$out" | rb_median
}

rb_now() { date +%s.%N; }

# rb_config REPO COUNTER: perfbot.yaml filled in for the case, on stdout
rb_config() {
	# a value as sed's replacement text: \, & and the delimiter escaped
	fill() { printf '%s' "$1" | sed -e 's/[\\&|]/\\&/g'; }
	sed -e "s|@REPO@|$(fill "$1")|g" -e "s|@COUNTER@|$(fill "$2")|g" -e "s|@BENCHTIME@|$(fill "$RB_BENCHTIME")|g" \
		-e "s|@PKG@|$(fill "$RB_PKG")|g" -e "s|@BENCH@|$(fill "$RB_BENCH")|g" -e "s|@SELECT@|$(fill "$RB_SELECT")|g" \
		-e "s|@UNIT@|$(fill "$RB_UNIT")|g" -e "s|@BETTER@|$(fill "$RB_BETTER")|g" "$(dirname "${BASH_SOURCE[0]}")/perfbot.yaml"
}
