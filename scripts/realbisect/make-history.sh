#!/usr/bin/env bash
# make-history.sh OUT MODULE BENCHPKG V1 V2 ...
#
# Builds a git repository in OUT with one commit per released version of
# MODULE, oldest first: each commit's tree is exactly that version's module
# zip as the Go module proxy serves it (go mod download -json, .Dir), its
# subject is the version, its dates are the version's release time, and it
# is tagged with the version. The module path is kept, so every commit
# builds standalone with `go test`.
#
# Before each commit the version's own dependencies are fetched into the
# module cache (go mod download, GOFLAGS=-mod=mod), so that later builds can
# run offline (GOPROXY=off GOFLAGS=-mod=mod). What that step rewrites is
# committed as it comes out: under -mod=mod the go command tidies go.mod
# (v1.12.2..v1.13.4 of klauspost/compress lose an "// indirect"), and a
# build would rewrite it the same way, so committing it keeps every
# checkout clean after a build (git bisect checks out over it). Every other
# file is byte for byte the module zip.
#
# BENCHPKG (e.g. ./zstd) is checked to build as a test binary at every
# commit when CHECK=1 (go test -trimpath -vet=off -c, the build of case.sh,
# which also fills the build cache for the bisections); a commit that does
# not build is reported, and kept.
#
# The commit hashes are reproducible: author, committer and dates are fixed
# by the version, so the same versions give the same history.
#
# Example (the case in README.md):
#   scripts/realbisect/make-history.sh /tmp/realbisect/compress \
#       github.com/klauspost/compress ./zstd $(scripts/realbisect/versions.sh)
set -euo pipefail

if [ $# -lt 4 ]; then
	echo "usage: $0 OUT MODULE BENCHPKG V1 V2 ..." >&2
	exit 1
fi
out=$1 module=$2 benchpkg=$3
shift 3

if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
	echo "make-history: $out exists and is not empty" >&2
	exit 1
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

export GOFLAGS=-mod=mod
export GIT_AUTHOR_NAME="release bot" GIT_AUTHOR_EMAIL="release@example.invalid"
export GIT_COMMITTER_NAME="release bot" GIT_COMMITTER_EMAIL="release@example.invalid"

git -C "$out" init -q -b main
git -C "$out" config core.autocrlf false
# a module's own .gitignore must not drop files that are in its zip
git -C "$out" config core.excludesFile /dev/null

n=0
for v in "$@"; do
	info=$(go mod download -json "$module@$v")
	dir=$(printf '%s\n' "$info" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
	err=$(printf '%s\n' "$info" | sed -n 's/^[[:space:]]*"Error": "\(.*\)",\{0,1\}$/\1/p')
	if [ -n "$err" ] || [ -z "$dir" ]; then
		echo "make-history: $module@$v: ${err:-no Dir in go mod download output}" >&2
		exit 2
	fi
	when=$(go list -m -json "$module@$v" | sed -n 's/^[[:space:]]*"Time": "\(.*\)",\{0,1\}$/\1/p')

	# Replace the working tree with this version's files.
	find "$out" -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {} +
	cp -R "$dir"/. "$out"/
	chmod -R u+w "$out"

	# The version's dependencies, into the module cache, for offline builds.
	(cd "$out" && go mod download) || {
		echo "make-history: $v: go mod download failed" >&2
		exit 2
	}

	if [ "${CHECK:-0}" = 1 ]; then
		if (cd "$out" && GOPROXY=off go test -trimpath -vet=off -c -o /dev/null "$benchpkg") >/dev/null 2>&1; then
			echo "make-history: $v: $benchpkg builds" >&2
		else
			echo "make-history: $v: $benchpkg DOES NOT BUILD (kept)" >&2
		fi
	fi

	git -C "$out" add -A -f .
	GIT_AUTHOR_DATE=${when:-2000-01-01T00:00:00Z} GIT_COMMITTER_DATE=${when:-2000-01-01T00:00:00Z} \
		git -C "$out" commit -q --allow-empty -m "$v" -m "$module@$v from the Go module proxy (go mod download)."
	git -C "$out" tag "$v"
	n=$((n + 1))
done
echo "make-history: $n commits in $out (HEAD $(git -C "$out" rev-parse --short HEAD))" >&2
