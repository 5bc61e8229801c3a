// Package store keeps perfbot's memory in one bbolt file: commits, runs and
// the samples they produced, the measurement cache that lets a search reuse
// every run ever made, jobs (so a killed search resumes) and findings with
// the issues filed for them.
//
// Every bucket and key layout is declared in schema.go. The file carries a
// schema version; Open migrates an older file and refuses a newer one.
// Reads and writes go through typed accessors that take a *bbolt.Tx; the
// methods of DB wrap each in one transaction, and every value is decoded
// (copied) before its transaction ends. A run, its samples, its index
// entries and its cache entry are written in one transaction, so a crash
// leaves either all of them or none.
//
// Open reads a file through before it trusts it: a store that is empty,
// cut short or overwritten is refused with ErrDamaged, naming the file and
// what to do; perfbot never repairs or recreates one. bbolt checks the
// structure of its pages but not what they hold, so every value carries a
// checksum of its key and itself (seal.go): a damaged record is reported
// as ErrDamagedRecord (also ErrDamaged) when it is read, never read as
// other data.
//
// Only one process may hold a store: a second Open fails after a short lock
// timeout with ErrLocked instead of waiting forever.
package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// ErrLocked reports that another process holds the store's file lock.
var ErrLocked = errors.New("store is in use by another process")

// ErrNewerSchema reports a store written by a newer perfbot.
var ErrNewerSchema = errors.New("store schema is newer than this perfbot")

// ErrAmbiguous reports an id prefix that matches more than one record.
var ErrAmbiguous = errors.New("ambiguous id prefix")

// lockedError is ErrLocked with the path and the time waited.
type lockedError struct {
	path    string
	timeout time.Duration
}

func (e *lockedError) Error() string {
	return fmt.Sprintf("store %s is in use by another perfbot process (lock not acquired within %s)", e.path, e.timeout)
}

func (e *lockedError) Is(target error) bool { return target == ErrLocked }

// DefaultLockTimeout is how long Open waits for another process to release
// the store.
const DefaultLockTimeout = time.Second

// Option changes how Open opens a store.
type Option func(*options)

type options struct {
	lockTimeout time.Duration
}

// WithLockTimeout sets how long Open waits for the file lock. A duration of
// zero or less tries once and fails at once. (bbolt itself would wait
// forever on zero.)
func WithLockTimeout(d time.Duration) Option {
	return func(o *options) { o.lockTimeout = d }
}

// DB is an open store. Its methods are safe for concurrent use; each runs
// in its own transaction and never nests one in another.
type DB struct {
	bolt *bolt.DB
	path string
}

// Open opens the store at path, creating the file and its parent
// directories if needed, and migrates it to SchemaVersion. An existing file
// is inspected before it is opened for writing: a file that is empty, cut
// short or holds pages bbolt cannot read is refused with an error wrapping
// ErrDamaged that names it, and is left as it was.
func Open(path string, opts ...Option) (*DB, error) {
	o := options{lockTimeout: DefaultLockTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	timeout := o.lockTimeout
	if timeout <= 0 {
		timeout = time.Nanosecond
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	b, err := openChecked(path, bolt.Options{Timeout: timeout})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, &lockedError{path: path, timeout: o.lockTimeout}
	}
	if err != nil {
		return nil, err
	}
	if err := b.Update(migrate); err != nil {
		_ = b.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return &DB{bolt: b, path: path}, nil
}

// openChecked opens the bbolt file at path for writing, after inspecting it
// if it exists.
func openChecked(path string, o bolt.Options) (*bolt.DB, error) {
	info, err := os.Stat(path)
	switch {
	case err == nil:
		if err := inspect(path, info.Size(), o); err != nil {
			return nil, err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return openGuarded(path, &o)
}

// view runs fn in a read transaction, with a fault or panic inside bbolt
// reported as ErrDamaged: Open checks the structure of the pages, but a
// leaf page's contents are read only when used, and bbolt trusts them (a
// damaged element header sends it past the end of the mapping).
func (db *DB) view(fn func(*bolt.Tx) error) error {
	return guard(db.path, func() error { return db.bolt.View(fn) })
}

// Path is the file the store lives in.
func (db *DB) Path() string { return db.path }

// Close releases the file and its lock.
func (db *DB) Close() error {
	if err := db.bolt.Close(); err != nil {
		return fmt.Errorf("close store %s: %w", db.path, err)
	}
	return nil
}

// getJSON decodes the sealed value under key into v (see seal); it
// reports false when the key is absent. Decoding copies, so v outlives the
// transaction.
func getJSON(b *bolt.Bucket, key []byte, v any) (bool, error) {
	raw := b.Get(key)
	if raw == nil {
		return false, nil
	}
	return true, decodeJSON(key, raw, v)
}

// putJSON stores v under key as sealed JSON.
func putJSON(b *bolt.Bucket, key []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %q: %w", key, err)
	}
	return putSealed(b, key, raw)
}

// getPlainJSON and putPlainJSON are getJSON and putJSON of the layouts
// before version 6, for the migrations up to it.
func getPlainJSON(b *bolt.Bucket, key []byte, v any) (bool, error) {
	raw := b.Get(key)
	if raw == nil {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, fmt.Errorf("decode %q: %w", key, err)
	}
	return true, nil
}

func putPlainJSON(b *bolt.Bucket, key []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %q: %w", key, err)
	}
	return b.Put(key, raw)
}
