#!/usr/bin/env bash
# versions.sh: the released versions of the case in README.md, oldest first:
# github.com/klauspost/compress v1.10.3 .. v1.18.7, as the module proxy lists
# them (47 versions; the proxy's list, minus retracted v1.18.1). The change
# is in v1.15.2 (x86-64 assembly zstd decoder).
#
# versions.sh --live asks the proxy instead (go list -m -versions) and
# prints that list between the same ends.
set -euo pipefail
first=v1.10.3 last=v1.18.7
if [ "${1:-}" = --live ]; then
	go list -m -versions github.com/klauspost/compress | tr ' ' '\n' | sed 1d |
		awk -v a=$first -v b=$last '$0==a{on=1} on{print} $0==b{exit}' | grep -vx v1.18.1 | tr '\n' ' '
	echo
	exit 0
fi
echo v1.10.3 v1.10.4 v1.10.5 v1.10.7 v1.10.10 v1.11.3 v1.11.4 v1.11.7 v1.11.13 \
	v1.12.2 v1.12.3 v1.13.1 v1.13.4 v1.13.5 v1.13.6 v1.14.4 v1.15.0 v1.15.1 \
	v1.15.2 v1.15.6 v1.15.9 v1.15.11 v1.15.12 v1.15.13 v1.15.15 \
	v1.16.0 v1.16.3 v1.16.5 v1.16.7 \
	v1.17.0 v1.17.2 v1.17.3 v1.17.4 v1.17.5 v1.17.6 v1.17.7 v1.17.8 v1.17.9 v1.17.10 v1.17.11 \
	v1.18.0 v1.18.2 v1.18.3 v1.18.4 v1.18.5 v1.18.6 v1.18.7
