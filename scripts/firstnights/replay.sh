#!/bin/bash
# 14 nights of a Go repository whose tip drops 8% on its eighth night,
# watched with the README's quick-start configuration (default detection):
# each night adds two commits and runs `perfbot nightly`. Usage, from a
# clone after make build: scripts/firstnights/replay.sh /tmp/firstnights
set -euo pipefail
PERFBOT=${PERFBOT:-$(cd "$(dirname "$0")/../.." && pwd)/bin/perfbot}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
R=${1:?usage: replay.sh DIR (a new directory for the watched repository)}
if [ -e "$R" ]; then echo "replay.sh: $R exists; name a new directory" >&2; exit 1; fi
mkdir -p "$R"; cd "$R"
git init -q -b main
cat > go.mod <<'G'
module example.com/decode

go 1.22
G
cat > work.go <<'G'
package decode

// extra is per mille of additional work per token.
var extra = 0

func decodeToken(x uint64) uint64 {
	n := 200000 + 200000*extra/1000
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}
G
cat > bench_test.go <<'G'
package decode

import "testing"

var sink uint64

func BenchmarkDecode(b *testing.B) {
	var x uint64
	for i := 0; i < b.N; i++ {
		for t := 0; t < 64; t++ {
			x = decodeToken(x)
		}
	}
	sink = x
	b.ReportMetric(float64(64*b.N)/b.Elapsed().Seconds(), "tok/s")
}
G
sed -n '/<!-- quickstart: perfbot.yaml -->/,/^```$/p' "$ROOT/README.md" | sed '1,2d;$d' > perfbot.yaml
printf '.perfbot/\n.perfbot-bench.test\n' > .gitignore
git add -A && git commit -qm "decode: the first version"
for night in $(seq 1 14); do
  for k in 1 2; do
    echo "// night $night, change $k" >> NOTES
    if [ "$night" = 8 ] && [ "$k" = 2 ]; then
      sed -i 's/^var extra = 0$/var extra = 87/' work.go
      git add -A && git commit -qm "decode: check each token's state (night $night)"
    else
      git add -A && git commit -qm "notes: night $night, change $k"
    fi
  done
  echo "=== night $night: tip $(git rev-parse --short HEAD)"
  "$PERFBOT" nightly 2>&1 | tail -n 25
done
echo "=== findings"; "$PERFBOT" findings
ls .perfbot/issues
