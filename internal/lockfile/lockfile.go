// Package lockfile gives one perfbot process at a time the use of a part
// of a workdir: the clone while it is cloned or fetched, one worktree
// while a target is built and measured in it. A lock is an flock(2) on a
// file that also says who holds it (pid, host, command line, since when),
// so that a process that cannot take it names the holder.
//
// The kernel drops an flock when the last descriptor of its open file goes,
// so a holder killed by SIGKILL leaves no stale lock behind; the file keeps
// its last holder's description, which means nothing while no one holds
// it. Locks are advisory and per open file: two Acquire calls for one path
// exclude each other even within one process.
package lockfile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/perfbot/perfbot/secret"
)

// pollInterval is how often a waiting Acquire tries again. flock offers
// no wait that a context can end, so waiting is polling.
const pollInterval = 25 * time.Millisecond

// Holder describes the process that holds a lock.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
}

// String names the holder for an error message.
func (h Holder) String() string {
	if h.PID == 0 {
		return "another process"
	}
	return fmt.Sprintf("pid %d on %s (%s) since %s", h.PID, h.Host, h.Command, h.Since.Format(time.RFC3339))
}

// HeldError reports a lock that another process held for longer than the
// caller would wait.
type HeldError struct {
	// Path is the lock file.
	Path string
	// Holder is what the file says of its holder; zero when it could not
	// be read.
	Holder Holder
	// Waited is how long Acquire waited.
	Waited time.Duration
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("%s is held by %s; waited %s", e.Path, e.Holder, e.Waited.Round(time.Millisecond))
}

// Lock is a held lock.
type Lock struct {
	f *os.File
}

// Acquire takes the lock of path, creating the file, and writes this
// process into it. While another process holds it, Acquire waits up to
// wait (not at all when wait is zero or negative) and then fails with a
// *HeldError naming the holder; ctx ending the wait returns ctx's error.
// onWait, when not nil, is called once with the holder when Acquire starts
// to wait.
func Acquire(ctx context.Context, path string, wait time.Duration, onWait func(Holder)) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	start := time.Now()
	for waited := false; ; waited = true {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if ok {
			break
		}
		if !waited && onWait != nil {
			onWait(readHolder(path))
		}
		if time.Since(start) >= wait {
			f.Close()
			return nil, &HeldError{Path: path, Holder: readHolder(path), Waited: time.Since(start)}
		}
		t := time.NewTimer(pollInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, ctx.Err())
		case <-t.C:
		}
	}
	if err := writeHolder(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

// Release drops the lock. Releasing twice is harmless.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	unlock(l.f)
	l.f.Close()
	l.f = nil
}

// Current describes this process as a holder.
func Current() Holder {
	host, _ := os.Hostname()
	cmd := secret.Scrub(strings.Join(os.Args, " "), nil)
	if len(cmd) > 200 {
		cmd = strings.ToValidUTF8(cmd[:200], "") + "…"
	}
	return Holder{PID: os.Getpid(), Host: host, Command: cmd, Since: time.Now().UTC().Truncate(time.Second)}
}

func writeHolder(f *os.File) error {
	data, err := json.Marshal(Current())
	if err != nil {
		return err
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err = f.WriteAt(append(data, '\n'), 0)
	return err
}

// readHolder reads what a lock file says of its holder; a file being
// rewritten reads as zero.
func readHolder(path string) Holder {
	var h Holder
	data, err := os.ReadFile(path)
	if err == nil {
		_ = json.Unmarshal(data, &h)
	}
	return h
}

// ErrUnsupported is returned where the system has no flock.
var ErrUnsupported = errors.New("file locks are not supported on this system")
