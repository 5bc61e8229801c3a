# The compress case (README.md): github.com/klauspost/compress v1.10.3 ..
# v1.18.7, one commit per release; the zstd decoder on one file of the
# package's own corpus. v1.15.2 added the x86-64 assembly decoder: MB/s
# rises about 2-3x there, an improvement.
# the package whose test binary holds the benchmark, and where it runs
: "${RB_PKG:=./zstd}"
# the one benchmark (go test -bench regexp, one level per /) and its name
# in the output (the metric's select)
: "${RB_BENCH:=^BenchmarkDecoder_DecodeAll\$/^kppkn\\.gtb\\.zst\$}"
: "${RB_SELECT:=BenchmarkDecoder_DecodeAll/kppkn.gtb.zst}"
# the unit column read from its output line, and which way is better
: "${RB_UNIT:=MB/s}"
: "${RB_BETTER:=higher}"
# the change's direction for perfbot, and the release that made it
: "${RB_DIRECTION:=improvement}"
: "${RB_EXPECT:=v1.15.2}"
: "${RB_GOOD:=v1.10.3}"
: "${RB_BAD:=v1.18.7}"
# fixed work per run
: "${RB_BENCHTIME:=100x}"
