package store

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// ErrDamaged reports a store file that is cut short or overwritten. Open
// never repairs or recreates such a file: the person who owns it decides.
var ErrDamaged = errors.New("store file is damaged")

// damagedError is ErrDamaged with the file and what is wrong with it.
type damagedError struct {
	path   string
	reason string
}

func (e *damagedError) Error() string {
	return fmt.Sprintf("store %s is damaged (%s); perfbot will neither repair nor recreate it: "+
		"restore it from a backup or move it aside (perfbot then starts an empty store)", e.path, e.reason)
}

func (e *damagedError) Is(target error) bool { return target == ErrDamaged }

// inspect reads the existing store at path, without writing, and reports
// ErrDamaged when the file is empty, cut short, or a page of it is not the
// page its parent points at. bbolt maps the file into memory and trusts
// it: a page past the end of a truncated file faults (SIGBUS) and a page
// of garbage panics, so the inspection runs with faults turned into panics
// and every panic recovered. It reads the header of every page in use
// (BenchmarkOpen1M: under 0.2 s for a million samples); the contents of a
// leaf page are read when they are used.
func inspect(path string, size int64, o bolt.Options) error {
	if size == 0 {
		return &damagedError{path: path, reason: "the file is empty"}
	}
	o.ReadOnly = true
	o.PreLoadFreelist = false // the freelist is read by the writable Open that follows
	b, err := openGuarded(path, &o)
	if err != nil {
		return err
	}
	defer b.Close()
	return guard(path, func() error {
		tx, err := b.Begin(false)
		if err != nil {
			return fmt.Errorf("begin inspection: %w", err)
		}
		defer func() { _ = tx.Rollback() }()
		if tx.Size() > size {
			return &damagedError{path: path, reason: fmt.Sprintf(
				"the file is %d bytes but its pages reach byte %d: it was cut short", size, tx.Size())}
		}
		// Stats walks every branch and leaf page of every bucket, checking
		// that each page is the page its parent says it is.
		return tx.ForEach(func(name []byte, bk *bolt.Bucket) error {
			_ = bk.Stats()
			return nil
		})
	})
}

// openGuarded is bolt.Open that reports a panic or fault, and bbolt's
// refusal of the file's header pages, as ErrDamaged. bbolt does not close
// the file when it panics, so the file is captured on its way in and
// released here.
func openGuarded(path string, o *bolt.Options) (*bolt.DB, error) {
	var file *os.File
	o.OpenFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
		f, err := os.OpenFile(name, flag, perm)
		file = f
		return f, err
	}
	var b *bolt.DB
	err := guard(path, func() error {
		var err error
		b, err = bolt.Open(path, 0o600, o)
		return err
	})
	var damaged *damagedError
	if errors.As(err, &damaged) && b == nil && file != nil {
		release(file)
	}
	if err != nil {
		return nil, classifyOpenError(path, err)
	}
	return b, nil
}

// classifyOpenError tells a damaged file from a file another process holds
// and from one perfbot cannot open for other reasons (permissions,
// resources).
func classifyOpenError(path string, err error) error {
	var damaged *damagedError
	switch {
	case errors.As(err, &damaged), errors.Is(err, berrors.ErrTimeout):
		return err
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum):
		return &damagedError{path: path, reason: fmt.Sprintf("its header pages are not a bbolt database's (%v)", err)}
	case errors.Is(err, berrors.ErrVersionMismatch):
		return &damagedError{path: path, reason: fmt.Sprintf("its header pages are of another bbolt file format (%v)", err)}
	case strings.HasPrefix(err.Error(), "file size too small"):
		// bbolt's error for a file shorter than its two header pages is
		// not typed.
		return &damagedError{path: path, reason: fmt.Sprintf("it is too small to hold a store (%v)", err)}
	default:
		return fmt.Errorf("open store %s: %w", path, err)
	}
}

// guard runs fn with memory faults turned into panics and turns a panic
// into ErrDamaged: inside bbolt, both mean the mapped file is not what its
// pages claim.
func guard(path string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = &damagedError{path: path, reason: fmt.Sprintf("bbolt could not read a page: %v", p)}
		}
	}()
	return fn()
}
