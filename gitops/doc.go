// Package gitops is perfbot's view of the watched repository: a clone it
// owns, the first-parent history, worktree slots to build in, and diffs cut
// into hunks that can be applied in any subset.
//
// # The clone
//
// Open clones the configured URL (a path or a clone URL) into
// workdir/repo as a bare repository and fetches with go-git. Every fetch
// mirrors origin's branches twice, as refs/heads/* and as
// refs/remotes/origin/*, and its tags, pruning what origin deleted. So
// "main" and "origin/main" name the same commit, the state of origin at the
// last fetch, and the user's own repository is never written. Revisions
// resolve like git rev-parse (hashes, short hashes, branches, tags, HEAD~N,
// main^2); a short hash that matches two commits is an error rather than a
// guess.
//
// # Reverts and dependencies
//
// RevertOnto undoes a commit's hunks on a later tip, as git revert would
// (strictly, then by a three-way merge), and keeps the result as a commit
// under refs/perfbot/revert/, which fetching never prunes; PushRevert
// pushes it to a branch under perfbot/revert- of another remote, never
// anywhere else. DependencyChanges and SubmoduleChanges name the
// dependency versions a commit changes. For the descent into such a bump,
// GoModuleVersions lists a Go module's versions between two from the
// module proxies of GOPROXY, FetchDependency brings a dependency's
// repository into the clone under refs/perfbot/deps/, and SwapDependency
// records a culprit with a dependency's version required (go mod edit and
// go mod download, through GOPROXY) or its tree put at a path (a
// submodule's, or one that a replace directive points a module at) as a
// commit under refs/perfbot/descent/: the commits of one descent form a
// chain, so neighbours differ by the dependency's own change.
//
// # Slots
//
// A slot is a linked worktree (git worktree add, which go-git lacks) under
// workdir/slots/N where one build runs at a time. Every Checkout forces the
// tree to the commit and runs git clean -ffdx, so nothing a previous build
// wrote, ignored or not, leaks into the next one; build caches belong
// outside the tree. Different slots may be used concurrently. The lock
// files a killed git leaves in a slot (index.lock, HEAD.lock) are removed
// by the next checkout, which holds the slot.
//
// # Sharing a workdir
//
// Two perfbot processes may share a workdir; they never share a checkout.
// Cloning, fetching and adding a worktree happen under an flock on
// workdir/lock, so a second process waits for the first's clone instead of
// racing it. A slot is taken with LockSlot (an flock on
// workdir/slots/N.lock that names its holder) for as long as a target is
// built and measured in it; a Checkout of a slot this Repo does not hold
// takes the lock for the checkout. Every checkout leaves a stamp beside the
// slot (workdir/slots/N.checkout) with a new identity, and VerifySlot
// compares a slot with the checkout that was made: the stamp, HEAD and the
// contents of the applied hunks.
//
// # Hunks
//
// Diff runs git diff -U1 --find-renames --binary and parses it with
// go-gitdiff. One line of context keeps hunks small and still lets any
// subset of one file's hunks apply exactly to the parent: every fragment's
// position refers to the parent's lines, and go-gitdiff applies strictly
// (no fuzz, no offset search), which matches git apply byte for byte. Zero
// context (-U0) is never used: go-gitdiff places pure insertions one line
// early there.
//
// A modified text file contributes one Hunk per fragment. A new, deleted,
// renamed, binary or mode-only file is a single Hunk, applied whole: half a
// new file is never a meaningful configuration. Hunk IDs are
// "<first 8 hex of sha256(path)>-<n>", stable for the same diff across
// runs; Patch.ID is a hash of the diff text.
//
// Each hunk is labelled with the function or type that contains its first
// changed line (go/parser for Go, indentation for Python, git's hunk
// header otherwise), and Dependencies lists which hunks need which others by
// a def-use scan of the added lines, so a search over hunk subsets can close
// each subset before building it. The scan is a heuristic: it errs towards
// listing too many dependencies, never towards applying a half rename.
//
// # Remote clones
//
// A host that keeps a clone of its own and never reaches origin (an ssh
// host) gets what it lacks from WriteBundle: a git bundle of a commit's
// history less the commits it says it has, made in a scratch repository
// that borrows this clone's objects, so this clone gains no refs. Apply
// computes what a subset of hunks does to its base, exactly as
// CheckoutPatch would, and returns it as a full-index binary diff for git
// apply over there, with the blob each written path must then hold.
//
// Submodules are ignored by diffs and not updated in slots.
package gitops
