#!/usr/bin/env bash
# history.sh GPTFAST_GIT DIR: a copy of a stretch of gpt-fast's real history
# in the new repository DIR (branch main, linear), with two changes put in:
#
#   - after "moe/download.py - ignore safetensors download (#130)", a commit
#     of three hunks in model.py and generate.py of which one (the rotary
#     table made again in each layer on each call: more operations per
#     layer for an eager engine that is bound by its Python) costs decode
#     tok/s;
#     every later commit carries it, as a rebase would;
#   - serve.args, the settings of the serving benchmark's launch command
#     (scripts/gptfast/server.py), added with the first commit, and a later
#     commit that raises its --spec-k from 5 to 8 (a server-side change).
#
# The stretch is the first-parent history from "Sort imports. (#16)" to the
# last commit before batched generation (bc04265), each commit's tree as it
# was, with its author, date and message. DIR/manifest.txt names the
# commits. GPTFAST_GIT is a clone of github.com/pytorch-labs/gpt-fast.
set -euo pipefail
SRC=${1:?usage: history.sh GPTFAST_GIT DIR}
DIR=${2:?usage: history.sh GPTFAST_GIT DIR}
FIRST=db7b273 LAST=bc04265 INJECT_AFTER=f479b07 SERVE_AFTER=1095a5c
if [ -e "$DIR" ]; then echo "history.sh: $DIR exists; name a new directory" >&2; exit 1; fi
git init -q -b main "$DIR"
git -C "$DIR" fetch -q "$SRC" "$(git -C "$SRC" rev-parse "$LAST^{commit}")"
g() { git -C "$DIR" "$@"; }
export GIT_INDEX_FILE="$DIR/.git/history-index"

# inject DIR: the injected change, made in the tree at DIR. It fails when
# a hunk's anchor is not there, rather than commit a tree without it.
inject() {
	python3 - "$1" <<'PY'
import sys, pathlib
root = pathlib.Path(sys.argv[1])

def edit(name, old, new):
    f = root / name
    s = f.read_text()
    if s.count(old) != 1:
        sys.exit(f"history.sh: {name}: the text to change is not there once")
    f.write_text(s.replace(old, new))

# The hunk that costs: the rotary table made again in every layer on
# every call, on the device (about fifteen small operations per layer,
# which an eager engine bound by its Python pays for each token), where
# the model made it once in setup_caches.
edit("model.py",
     "        q = apply_rotary_emb(q, freqs_cis)\n",
     "        if self.kv_cache is not None:\n"
     "            # The rotary table follows the KV cache's length, which\n"
     "            # setup_caches may change after the model is built.\n"
     "            with torch.device(x.device):\n"
     "                table = precompute_freqs_cis(self.kv_cache.k_cache.size(2), self.head_dim)\n"
     "            freqs_cis = table[input_pos]\n"
     "        q = apply_rotary_emb(q, freqs_cis)\n")
# Two that cost nothing.
edit("model.py", "        self.kv_cache = None\n", "        self.kv_cache: Optional[KVCache] = None\n")
edit("generate.py", "def model_forward(model, x, input_pos):\n",
     "def model_forward(model, x, input_pos):\n    # Also the verify pass of speculative decoding: k+1 positions at once.\n")
PY
}

# put_in NAME EMAIL MESSAGE: commit the tree at $work/t on $parent as NAME,
# an hour after the commit before it.
put_in() {
	rm -f "$GIT_INDEX_FILE"
	g --work-tree="$work/t" add -A .
	tree=$(g write-tree)
	export GIT_AUTHOR_DATE=$(date -u -d "$GIT_AUTHOR_DATE + 1 hour" +%Y-%m-%dT%H:%M:%SZ) GIT_AUTHOR_NAME="$1" GIT_AUTHOR_EMAIL="$2"
	export GIT_COMMITTER_NAME="$1" GIT_COMMITTER_EMAIL="$2" GIT_COMMITTER_DATE="$GIT_AUTHOR_DATE"
	parent=$(printf "$3" | g commit-tree "$tree" -p "$parent")
	n=$((n + 1))
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
parent="" injected=0 n=0 culprit="" servechange="" root=""
for c in $(g rev-list --first-parent --reverse "$FIRST^..FETCH_HEAD"); do
	rm -rf "$work/t" && mkdir "$work/t"
	g archive "$c" | tar -x -C "$work/t"
	if [ "$injected" = 1 ]; then
		inject "$work/t"
	fi
	if [ -z "$servechange" ]; then
		echo "--cache-len 4096 --spec-k 5 --draft-layers 3" > "$work/t/serve.args"
	else
		echo "--cache-len 4096 --spec-k 8 --draft-layers 3" > "$work/t/serve.args"
	fi
	rm -f "$GIT_INDEX_FILE"
	g --work-tree="$work/t" add -A .
	tree=$(g write-tree)
	export GIT_AUTHOR_NAME=$(g log -1 --format=%an "$c") GIT_AUTHOR_EMAIL=$(g log -1 --format=%ae "$c") GIT_AUTHOR_DATE=$(g log -1 --format=%aI "$c")
	export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL" GIT_COMMITTER_DATE="$GIT_AUTHOR_DATE"
	msg=$(g log -1 --format=%B "$c")
	[ -z "$parent" ] && msg="$msg"$'\n\n'"(serve.args: the serving benchmark's launch settings, added with this copy)"
	parent=$(echo "$msg" | g commit-tree "$tree" ${parent:+-p "$parent"})
	[ -z "$root" ] && root=$parent
	n=$((n + 1))
	if [ "$c" = "$(g rev-parse "$INJECT_AFTER")" ]; then
		inject "$work/t"
		put_in "Dana Ruiz" dana@example.com 'model: the rotary table follows the KV cache length\n\nsetup_caches may be called again with a longer max_seq_length; the\nattention now makes its rotary table for the cache it has. Annotate the\ncache and note the verify pass in model_forward.\n'
		culprit=$parent injected=1
	fi
	if [ "$c" = "$(g rev-parse "$SERVE_AFTER")" ]; then
		echo "--cache-len 4096 --spec-k 8 --draft-layers 3" > "$work/t/serve.args"
		put_in "Sam Okafor" sam@example.com 'serve: draft 8 tokens a cycle\n'
		servechange=$parent
	fi
done
g update-ref refs/heads/main "$parent"
unset GIT_INDEX_FILE
g checkout -q main
{
	echo "root $root"
	echo "culprit $culprit"
	echo "serve_change $servechange"
	echo "head $parent"
	echo "commits $n"
} > "$DIR/manifest.txt"
echo "manifest.txt" >> "$DIR/.git/info/exclude"
cat "$DIR/manifest.txt"
