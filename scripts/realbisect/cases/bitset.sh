# The bitset case (README.md): github.com/bits-and-blooms/bitset v1.2.0 ..
# v1.29.0, one commit per release the module proxy serves; the iteration
# over a sparse bitmap of Lemire's benchmark. v1.20.0 made it about a third
# slower in ns/op (the benchmark's code is the same on both sides), a
# regression.
: "${RB_PKG:=.}"
: "${RB_BENCH:=^BenchmarkLemireIterate\$}"
: "${RB_SELECT:=BenchmarkLemireIterate}"
: "${RB_UNIT:=ns/op}"
: "${RB_BETTER:=lower}"
: "${RB_DIRECTION:=regression}"
: "${RB_EXPECT:=v1.20.0}"
: "${RB_GOOD:=v1.2.0}"
: "${RB_BAD:=v1.29.0}"
# 20 iterations of about 3 ms, after a setup that fills the bitmap
: "${RB_BENCHTIME:=20x}"
