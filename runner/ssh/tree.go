package ssh

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/internal/lockfile"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/internal/proc"
)

// remoteStamp is what a tree's last checkout made of it, kept beside the
// tree on the host (Workdir/trees/N.checkout). ID is new at every
// checkout.
type remoteStamp struct {
	ID     string   `json:"id"`
	Commit string   `json:"commit"`
	Patch  string   `json:"patch,omitempty"`
	Hunks  []string `json:"hunks,omitempty"`
}

// remoteLock is a tree's lock, held by a session on the host.
type remoteLock struct {
	ended    chan struct{} // closed when the lock's session has ended
	released bool
}

func (s *Host) treeNumber(slot, tree int) int {
	return slot*s.Layout().Trees + tree
}

func (s *Host) treeDir(n int) string { return path.Join(s.Workdir, "trees", strconv.Itoa(n)) }
func (s *Host) scratch(n int) string { return path.Join(s.Workdir, "scratch", strconv.Itoa(n)) }

// Lock takes tree (slot, tree) with flock(1) on the host, kills what a
// perfbot that died while it held the tree left running there and empties
// the tree's scratch directory. The lock's session lasts until release.
func (s *Host) Lock(ctx context.Context, slot, tree int) (func(), error) {
	n := s.treeNumber(slot, tree)
	op := fmt.Sprintf("lock tree %d", n)
	wait := s.LockWait
	if wait == 0 {
		wait = runner.DefaultLockWait
	}
	holder, err := json.Marshal(lockfile.Current())
	if err != nil {
		return nil, s.infra(op, err)
	}
	lockFile := proc.ShellQuote(s.treeDir(n) + ".lock")
	sc := proc.ShellQuote(s.scratch(n))
	waitCmd := "exit 3"
	if wait > 0 {
		waitCmd = fmt.Sprintf("flock -w %.1f 9 || exit 3", wait.Seconds())
	}
	script := proc.ShellLib + fmt.Sprintf(`mkdir -p %s %s && chmod 700 %[2]s || exit 1
exec 9>> %s || exit 1
if ! flock -n 9; then
	echo "perfbot-waiting $(head -c 1000 %s | tr -d '\n')" >&2
	%s
fi
printf '%%s\n' %s > %s
if [ -f %s/running ]; then
	read -r pg mark < %s/running
	if [ -n "$pg" ] && [ "$pg" -gt 1 ] && perfbot_live "$pg" "$mark"; then
		kill -KILL -"$pg"
		perfbot_gone "$pg" 100
		echo "perfbot-reaped $pg" >&2
	fi
fi
rm -rf %s && mkdir -m 700 -p %s || exit 1
echo perfbot-locked >&2
exec cat > /dev/null
`, proc.ShellQuote(path.Join(s.Workdir, "trees")), proc.ShellQuote(path.Join(s.Workdir, "scratch")),
		lockFile, lockFile, waitCmd, proc.ShellQuote(string(holder)), lockFile, sc, sc, sc, sc)

	sess, done, err := s.session(ctx)
	if err != nil {
		return nil, withOp(err, op)
	}
	stdin, err := sess.StdinPipe()
	if err != nil {
		sess.Close()
		done()
		return nil, s.infra(op, err)
	}
	events := &lockLog{locked: make(chan struct{}), onWait: func(h lockfile.Holder) {
		s.logger().Info("waiting for a tree another process measures in", "host", s.Name(), "slot", slot, "tree", n, "holder", h.String())
	}}
	sess.Stderr = events
	if err := sess.Start(remoteShell(script)); err != nil {
		sess.Close()
		done()
		return nil, s.infra(op, err)
	}
	ended := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = sess.Wait()
		close(ended)
		sess.Close()
		done()
	}()
	select {
	case <-events.locked:
	case <-ended:
		if waitErr == nil {
			waitErr = errors.New("the lock's session ended")
		}
		var exit *gossh.ExitError
		if errors.As(waitErr, &exit) && exit.ExitStatus() == 3 {
			return nil, s.infra(op, fmt.Errorf("held by %s", events.holder().String()))
		}
		return nil, s.infra(op, scriptError(waitErr, []byte(events.text())))
	case <-ctx.Done():
		stdin.Close()
		sess.Close()
		return nil, ctx.Err()
	}
	if pg := events.reaped(); pg != "" {
		s.logger().Warn("killed the processes of a command whose perfbot died", "host", s.Name(), "pgid", pg)
	}
	l := &remoteLock{ended: ended}
	s.mu.Lock()
	if s.held == nil {
		s.held = map[int]*remoteLock{}
	}
	s.held[n] = l
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		if l.released {
			s.mu.Unlock()
			return
		}
		l.released = true
		if s.held[n] == l {
			delete(s.held, n)
		}
		s.mu.Unlock()
		stdin.Close()
		select {
		case <-ended:
		case <-time.After(proc.GroupExitWait):
			sess.Close()
		}
	}, nil
}

// lockLog reads the lock script's reports from its standard error.
type lockLog struct {
	locked chan struct{}
	onWait func(lockfile.Holder)

	buf     []byte // an incomplete line
	lines   []string
	holderJ string
	pg      string
	closed  bool
}

// Write is called by the one goroutine that copies the session's
// standard error.
func (l *lockLog) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		l.line(string(l.buf[:i]))
		l.buf = l.buf[i+1:]
	}
	return len(p), nil
}

func (l *lockLog) line(s string) {
	switch {
	case s == "perfbot-locked":
		if !l.closed {
			l.closed = true
			close(l.locked)
		}
	case strings.HasPrefix(s, "perfbot-waiting "):
		l.holderJ = strings.TrimPrefix(s, "perfbot-waiting ")
		if l.onWait != nil {
			l.onWait(l.holder())
		}
	case strings.HasPrefix(s, "perfbot-reaped "):
		l.pg = strings.TrimPrefix(s, "perfbot-reaped ")
	default:
		if len(l.lines) < 20 {
			l.lines = append(l.lines, proc.Clip(s, 200))
		}
	}
}

func (l *lockLog) holder() lockfile.Holder {
	var h lockfile.Holder
	_ = json.Unmarshal([]byte(l.holderJ), &h)
	return h
}

func (l *lockLog) reaped() string { return l.pg }
func (l *lockLog) text() string   { return strings.Join(l.lines, "\n") }

// lockLost reports a lock of tree n this process took whose session
// ended before it was released: the connection dropped, and another
// process may have taken the tree since.
func (s *Host) lockLost(n int) bool {
	s.mu.Lock()
	l := s.held[n]
	s.mu.Unlock()
	if l == nil {
		return false
	}
	select {
	case <-l.ended:
		return true
	default:
		return false
	}
}

// Materialize checks src out into tree (slot, tree) on the host: the
// commit, sent first when the host's clone lacks it, forced and cleaned,
// with the hunks applied by git apply.
func (s *Host) Materialize(ctx context.Context, slot, tree int, src runner.Source) (runner.Workspace, error) {
	t := src.Target
	lay := s.Layout()
	if slot < 0 || slot >= lay.Slots || tree < 0 || tree >= lay.Trees {
		return runner.Workspace{}, fmt.Errorf("materialize %s: no tree %d in slot %d of host %s", t.Short(), tree, slot, s.Name())
	}
	if s.Repo == nil || s.Workdir == "" {
		return runner.Workspace{}, fmt.Errorf("materialize %s: host %s has no repository or workdir", t.Short(), s.Name())
	}
	op := "check out " + t.Short()
	st := remoteStamp{ID: newStampID()}
	var applied *gitops.Applied
	switch {
	case len(t.Hunks) == 0:
		c, err := s.Repo.Resolve(ctx, t.Commit)
		if err != nil {
			return runner.Workspace{}, s.infra(op, err)
		}
		st.Commit = c.Hash
	case src.Patch == nil:
		return runner.Workspace{}, fmt.Errorf("materialize %s: the hunks of patch %s are not given", t.Short(), t.Patch)
	default:
		var err error
		applied, err = s.Repo.Apply(ctx, src.Patch, t.Hunks)
		var ae *gitops.ApplyError
		switch {
		case errors.As(err, &ae):
			return runner.Workspace{}, err
		case err != nil:
			return runner.Workspace{}, s.infra(op, err)
		}
		st.Commit, st.Patch, st.Hunks = src.Patch.Base, src.Patch.ID, sortedIDs(t.Hunks)
	}
	if err := s.ensureCommit(ctx, st.Commit); err != nil {
		return runner.Workspace{}, withOp(err, op)
	}
	n := s.treeNumber(slot, tree)
	stamp, err := json.Marshal(st)
	if err != nil {
		return runner.Workspace{}, s.infra(op, err)
	}
	dir := proc.ShellQuote(s.treeDir(n))
	repo := proc.ShellQuote(path.Join(s.Workdir, "repo"))
	var in io.Reader
	apply := ""
	if applied != nil {
		in = bytes.NewReader(applied.Diff)
		apply = fmt.Sprintf("git -C %s -c core.autocrlf=false apply --binary --whitespace=nowarn - || exit 1\n", dir)
	}
	script := fmt.Sprintf(`rm -f %[1]s.checkout || exit 1
if [ ! -e %[1]s/.git ]; then
	flock %[2]s sh -c 'rm -rf "$1" && git -C "$2" worktree prune && git -C "$2" -c core.autocrlf=false worktree add --quiet --force --detach "$1" "$3"' sh %[1]s %[3]s %[4]s || exit 1
fi
g=$(git -C %[1]s rev-parse --absolute-git-dir) || exit 1
rm -f "$g/index.lock" "$g/HEAD.lock"
git -C %[1]s -c core.autocrlf=false -c advice.detachedHead=false checkout --quiet --detach --force %[4]s || exit 1
git -C %[1]s clean -ffdxq || exit 1
%[5]sprintf '%%s\n' %[6]s > %[1]s.checkout.tmp && mv -f %[1]s.checkout.tmp %[1]s.checkout
mkdir -m 700 -p %[7]s && chmod 700 %[7]s
`, dir, proc.ShellQuote(path.Join(s.Workdir, "lock")), repo, st.Commit, apply, proc.ShellQuote(string(stamp)), proc.ShellQuote(s.scratch(n)))
	if _, err := s.output(ctx, op, script, in); err != nil {
		return runner.Workspace{}, err
	}
	s.mu.Lock()
	if s.applied == nil {
		s.applied = map[string][]gitops.AppliedFile{}
	}
	if applied != nil {
		s.applied[st.ID] = applied.Files
	}
	s.mu.Unlock()
	return runner.Workspace{Dir: s.treeDir(n), Scratch: s.scratch(n), Stamp: st.ID}, nil
}

func newStampID() string {
	var id [12]byte
	_, _ = rand.Read(id[:])
	return hex.EncodeToString(id[:])
}

func sortedIDs(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

// ensureCommit makes sure the host's clone holds commit: it asks which
// commits the clone has (the refs perfbot left there) and sends a bundle
// of what is missing through the session's input.
func (s *Host) ensureCommit(ctx context.Context, commit string) error {
	s.fetchMu.Lock()
	defer s.fetchMu.Unlock()
	if s.has[commit] {
		return nil
	}
	repo := proc.ShellQuote(path.Join(s.Workdir, "repo"))
	lock := proc.ShellQuote(path.Join(s.Workdir, "lock"))
	query := fmt.Sprintf(`mkdir -p %[1]s || exit 1
[ -d %[2]s ] || flock %[3]s sh -c '[ -d "$1" ] || git init --quiet --bare "$1"' sh %[2]s || exit 1
if git -C %[2]s cat-file -e %[4]s^{commit} 2> /dev/null; then
	echo have
else
	echo need
	git -C %[2]s for-each-ref --format='%%(objectname)' refs/perfbot/have/
fi
`, proc.ShellQuote(path.Join(s.Workdir, "tmp")), repo, lock, commit)
	out, err := s.output(ctx, "look up "+record.ShortHash(commit), query, nil)
	if err != nil {
		return err
	}
	lines := strings.Fields(string(out))
	if len(lines) > 0 && lines[0] == "have" {
		s.remember(commit)
		return nil
	}
	var haves []string
	if len(lines) > 1 {
		haves = lines[1:]
	}
	pr, pw := io.Pipe()
	bundled := make(chan error, 1)
	go func() {
		err := s.Repo.WriteBundle(ctx, pw, commit, haves)
		pw.CloseWithError(err)
		bundled <- err
	}()
	receive := fmt.Sprintf(`t=$(mktemp %[1]s/bundle.XXXXXX) || exit 1
cat > "$t" || { rm -f "$t"; exit 1; }
flock %[2]s git -C %[3]s fetch --quiet --no-tags "$t" %[4]s
rc=$?
rm -f "$t"
exit $rc
`, proc.ShellQuote(path.Join(s.Workdir, "tmp")), lock, repo, proc.ShellQuote("+"+gitops.BundleRef+":refs/perfbot/have/"+commit))
	_, err = s.output(ctx, "send "+record.ShortHash(commit), receive, pr)
	pr.Close()
	berr := <-bundled
	switch {
	case err != nil:
		// The host's failure; the bundle then failed to write.
		return err
	case berr != nil:
		return s.infra("bundle "+record.ShortHash(commit), berr)
	}
	s.remember(commit)
	return nil
}

func (s *Host) remember(commit string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.has == nil {
		s.has = map[string]bool{}
	}
	s.has[commit] = true
}

// Verify checks tree (slot, tree) on the host against the checkout that
// made ws: its stamp, its HEAD and the content of every file the hunks
// wrote or removed. A lock of the tree that was lost (its session ended
// with the connection) is an infrastructure failure too: another process
// may have measured there since.
func (s *Host) Verify(ctx context.Context, slot, tree int, ws runner.Workspace, src runner.Source) error {
	t := src.Target
	if s.Repo == nil {
		return fmt.Errorf("verify %s: host %s has no repository", t.Short(), s.Name())
	}
	op := "verify tree of " + t.Short()
	n := s.treeNumber(slot, tree)
	if s.lockLost(n) {
		return s.infra(op, runner.HostDown(fmt.Errorf("the lock of tree %d ended with its connection", n)))
	}
	want, err := s.Repo.Resolve(ctx, t.Commit)
	if err != nil {
		return s.infra(op, err)
	}
	var files []gitops.AppliedFile
	patchID := ""
	if len(t.Hunks) > 0 && src.Patch != nil {
		patchID = src.Patch.ID
		s.mu.Lock()
		files = s.applied[ws.Stamp]
		s.mu.Unlock()
		if files == nil {
			a, err := s.Repo.Apply(ctx, src.Patch, t.Hunks)
			if err != nil {
				return s.infra(op, err)
			}
			files = a.Files
		}
	}
	dir := s.treeDir(n)
	var b strings.Builder
	fmt.Fprintf(&b, "printf 'stamp '; cat %s.checkout 2> /dev/null || echo\n", proc.ShellQuote(dir))
	fmt.Fprintf(&b, "printf 'head '; git -C %s rev-parse --verify HEAD 2> /dev/null || echo\n", proc.ShellQuote(dir))
	for i, f := range files {
		p := proc.ShellQuote(path.Join(dir, f.Path))
		fmt.Fprintf(&b, `printf 'file %d '
if [ -L %[2]s ]; then printf %%s "$(readlink %[2]s)" | git hash-object --stdin
elif [ -f %[2]s ]; then git hash-object --no-filters -- %[2]s
else echo -
fi
`, i, p)
	}
	out, err := s.output(ctx, op, b.String(), nil)
	if err != nil {
		return err
	}
	changed := func(format string, args ...any) error {
		return s.infra(op, fmt.Errorf("tree %d: %w: %s", n, runner.ErrTreeChanged, fmt.Sprintf(format, args...)))
	}
	got := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		if k == "file" {
			idx, hash, _ := strings.Cut(v, " ")
			got["file "+idx] = strings.TrimSpace(hash)
			continue
		}
		got[k] = strings.TrimSpace(v)
	}
	var st remoteStamp
	switch {
	case got["stamp"] == "":
		return changed("no finished checkout")
	case json.Unmarshal([]byte(got["stamp"]), &st) != nil:
		return changed("its stamp is not perfbot's: %s", proc.Clip(got["stamp"], 100))
	case st.ID != ws.Stamp:
		return changed("checked out again since (now %s)", record.ShortHash(st.Commit))
	case st.Commit != want.Hash:
		return changed("stamped %s, not %s", record.ShortHash(st.Commit), want.Short())
	case st.Patch != patchID || !slices.Equal(st.Hunks, sortedHunks(t.Hunks, patchID)):
		return changed("holds %d hunks of patch %q", len(st.Hunks), st.Patch)
	case got["head"] == "":
		return changed("the worktree is gone")
	case got["head"] != want.Hash:
		return changed("HEAD is %s, not %s", record.ShortHash(got["head"]), want.Short())
	}
	for i, f := range files {
		h := got["file "+strconv.Itoa(i)]
		switch {
		case f.Blob == "" && h != "-":
			return changed("%s is still there", f.Path)
		case f.Blob != "" && h != f.Blob:
			return changed("%s does not hold what the hunks wrote", f.Path)
		}
	}
	return nil
}

func sortedHunks(ids []string, patchID string) []string {
	if patchID == "" || len(ids) == 0 {
		return nil
	}
	return sortedIDs(ids)
}
