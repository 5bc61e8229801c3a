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
//
// A waiter blocks in flock, so the kernel hands it the lock as soon as
// the holder lets go, ahead of a holder that takes it again right away.
// flock cannot be interrupted: a wait that ends without the lock leaves
// the blocked call behind, to drop the lock at once when it gets it.
func Acquire(ctx context.Context, path string, wait time.Duration, onWait func(Holder)) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	ok, err := tryLock(f)
	abandoned := false
	if err == nil && !ok {
		abandoned, err = waitLock(ctx, f, path, wait, onWait)
	}
	if err != nil {
		if !abandoned {
			f.Close()
		}
		var held *HeldError
		if errors.As(err, &held) {
			return nil, held
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := writeHolder(f); err != nil {
		unlock(f)
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

// waitLock blocks in flock on f until it holds the lock, wait has passed
// or ctx ends. abandoned reports a blocked flock left behind, which owns f
// from then on.
func waitLock(ctx context.Context, f *os.File, path string, wait time.Duration, onWait func(Holder)) (abandoned bool, err error) {
	start := time.Now()
	if onWait != nil {
		onWait(readHolder(path))
	}
	if wait <= 0 {
		return false, &HeldError{Path: path, Holder: readHolder(path)}
	}
	got := make(chan error, 1)
	go func() { got <- lockBlocking(f) }()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case err := <-got:
		return false, err
	case <-ctx.Done():
		err = ctx.Err()
	case <-timer.C:
		err = &HeldError{Path: path, Holder: readHolder(path), Waited: time.Since(start)}
	}
	go func() {
		if <-got == nil {
			unlock(f)
		}
		f.Close()
	}()
	return true, err
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
