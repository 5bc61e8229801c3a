// Package gitopstest builds real git repositories in temporary directories
// for tests.
//
// Every repository is made with the git command line under a fixed author,
// committer and clock (one minute per commit from 2026-01-01 00:00 UTC) and
// with the user's git configuration switched off, so the same sequence of
// builder calls yields the same commit hashes on every machine. NewRepo
// makes the common shape, a line of commits titled "1".."n" as in
// syzkaller's bisection tests; Builder crafts anything else (branches,
// merges, renames, binary files, uncommitted changes).
package gitopstest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Epoch is the author and committer date of the first commit a Builder
// makes; each later commit is one minute later.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	authorName  = "Perf Bot Test"
	authorEmail = "test@perfbot.invalid"
)

// NewRepo creates a repository in t.TempDir() holding n commits on branch
// main titled "1".."n"; commit k writes "k\n" to counter.txt, so every
// commit has a different tree. It returns the repository directory and the
// full commit hashes, oldest first.
func NewRepo(t testing.TB, n int) (dir string, commits []string) {
	t.Helper()
	b := NewBuilder(t)
	return b.Dir, b.Numbered(n)
}

// Builder writes a repository commit by commit. Its methods fail the test on
// any git error, so test code reads as a list of history events.
type Builder struct {
	// Dir is the repository's working directory.
	Dir string

	t        testing.TB
	tick     int // commits made so far; sets the next commit's date
	numbered int // commits made by Numbered so far; sets the next title
}

// NewBuilder initializes an empty repository on branch main in
// t.TempDir().
func NewBuilder(t testing.TB) *Builder {
	t.Helper()
	b := &Builder{Dir: t.TempDir(), t: t}
	b.Git("init", "-q", "-b", "main")
	return b
}

// Commit writes files (path → content; an empty content deletes the path),
// stages every change in the working directory, commits it with message
// msg and returns the new commit's full hash. Contents are bytes, so a
// string holding NUL bytes makes a binary file.
func (b *Builder) Commit(msg string, files map[string]string) string {
	b.t.Helper()
	b.Write(files)
	b.Git("add", "-A")
	b.gitAt(b.nextDate(), "commit", "-q", "--allow-empty", "-m", msg)
	return b.Head()
}

// Write changes the working directory without committing: each path gets
// its content, and an empty content removes the path. WorkingDiff tests use
// it to leave uncommitted changes.
func (b *Builder) Write(files map[string]string) {
	b.t.Helper()
	for path, content := range files {
		full := filepath.Join(b.Dir, filepath.FromSlash(path))
		if content == "" {
			if err := os.Remove(full); err != nil && !os.IsNotExist(err) {
				b.t.Fatalf("gitopstest: remove %s: %v", path, err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			b.t.Fatalf("gitopstest: %v", err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			b.t.Fatalf("gitopstest: write %s: %v", path, err)
		}
	}
}

// Chmod sets the permission bits of a working-directory file; the next
// Commit records an executable bit change as a mode change.
func (b *Builder) Chmod(path string, mode os.FileMode) {
	b.t.Helper()
	if err := os.Chmod(filepath.Join(b.Dir, filepath.FromSlash(path)), mode); err != nil {
		b.t.Fatalf("gitopstest: chmod %s: %v", path, err)
	}
}

// Branch creates branch name at the current commit and switches to it.
func (b *Builder) Branch(name string) {
	b.t.Helper()
	b.Git("checkout", "-q", "-b", name)
}

// Switch checks out the existing branch name.
func (b *Builder) Switch(name string) {
	b.t.Helper()
	b.Git("checkout", "-q", name)
}

// Merge merges branch into the current branch with a merge commit (even
// when a fast-forward is possible) titled msg and returns its hash. The
// current branch stays the merge's first parent.
func (b *Builder) Merge(branch, msg string) string {
	b.t.Helper()
	b.gitAt(b.nextDate(), "merge", "-q", "--no-ff", "-m", msg, branch)
	return b.Head()
}

// Tag creates an annotated tag name on the current commit.
func (b *Builder) Tag(name string) {
	b.t.Helper()
	b.gitAt(b.nextDate(), "tag", "-a", "-m", name, name)
}

// Head returns the full hash of the current commit.
func (b *Builder) Head() string {
	b.t.Helper()
	return b.Git("rev-parse", "HEAD")
}

// Numbered appends n commits to the current branch, titled with the next
// n numbers of this builder ("1".."n" on the first call). Commit k writes
// "k\n" to counter.txt. It uses one git fast-import process, so histories
// of thousands of commits take a fraction of a second. It returns the new
// commits' full hashes, oldest first.
func (b *Builder) Numbered(n int) []string {
	b.t.Helper()
	if n <= 0 {
		return nil
	}
	branch := b.Git("symbolic-ref", "HEAD")
	parent, hasParent := b.tryGit("rev-parse", "--verify", "-q", "HEAD")

	var stream bytes.Buffer
	for i := 1; i <= n; i++ {
		title := fmt.Sprint(b.numbered + i)
		when := b.nextDate()
		stamp := fmt.Sprintf("%s <%s> %d +0000", authorName, authorEmail, when.Unix())
		fmt.Fprintf(&stream, "commit %s\nmark :%d\nauthor %s\ncommitter %s\n", branch, i, stamp, stamp)
		writeData(&stream, title+"\n")
		switch {
		case i > 1:
			fmt.Fprintf(&stream, "from :%d\n", i-1)
		case hasParent:
			fmt.Fprintf(&stream, "from %s\n", parent)
		}
		stream.WriteString("M 100644 inline counter.txt\n")
		writeData(&stream, title+"\n")
		stream.WriteString("\n")
	}
	stream.WriteString("done\n")
	b.numbered += n
	b.runAt(time.Time{}, &stream, nil, "fast-import", "--quiet", "--done")
	b.Git("reset", "-q", "--hard")
	out := b.Git("rev-list", "--first-parent", "--reverse", "-n", fmt.Sprint(n), "HEAD")
	return strings.Fields(out)
}

func writeData(w *bytes.Buffer, s string) {
	fmt.Fprintf(w, "data %d\n%s", len(s), s)
}

// Git runs git with args in the repository and returns its trimmed
// standard output; any failure fails the test.
func (b *Builder) Git(args ...string) string {
	b.t.Helper()
	return b.gitAt(time.Time{}, args...)
}

func (b *Builder) tryGit(args ...string) (string, bool) {
	cmd := b.command(time.Time{}, args...)
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err == nil
}

func (b *Builder) gitAt(when time.Time, args ...string) string {
	b.t.Helper()
	var out bytes.Buffer
	b.runAt(when, nil, &out, args...)
	return strings.TrimSpace(out.String())
}

func (b *Builder) runAt(when time.Time, stdin, stdout *bytes.Buffer, args ...string) {
	b.t.Helper()
	cmd := b.command(when, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if stdin != nil {
		cmd.Stdin = stdin
	}
	if stdout != nil {
		cmd.Stdout = stdout
	}
	if err := cmd.Run(); err != nil {
		b.t.Fatalf("gitopstest: git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
}

// command prepares a git invocation isolated from the user's and the
// system's configuration; when is the author and committer date (the epoch
// when zero, for commands that record none).
func (b *Builder) command(when time.Time, args ...string) *exec.Cmd {
	if when.IsZero() {
		when = Epoch
	}
	date := fmt.Sprintf("%d +0000", when.Unix())
	full := append([]string{
		"-c", "user.name=" + authorName,
		"-c", "user.email=" + authorEmail,
		"-c", "commit.gpgsign=false",
		"-c", "tag.gpgsign=false",
		"-c", "core.autocrlf=false",
	}, args...)
	cmd := exec.Command("git", full...)
	cmd.Dir = b.Dir
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME="+authorName,
		"GIT_AUTHOR_EMAIL="+authorEmail,
		"GIT_COMMITTER_NAME="+authorName,
		"GIT_COMMITTER_EMAIL="+authorEmail,
		"GIT_AUTHOR_DATE="+date,
		"GIT_COMMITTER_DATE="+date,
		"GIT_TERMINAL_PROMPT=0",
		"LC_ALL=C",
	)
	return cmd
}

func (b *Builder) nextDate() time.Time {
	b.tick++
	return Epoch.Add(time.Duration(b.tick) * time.Minute)
}
