package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Dir is a Tracker that keeps issues as Markdown files in a directory, for
// a setup without GitHub (issues_dir) and for the demo. Each issue is one
// file, <number>-<slug>.md, with the title as its heading and comments
// appended below; numbers, states and fingerprints are kept in index.json.
// One process at a time may write a directory.
type Dir struct {
	dir string
	now func() time.Time

	mu sync.Mutex
}

var _ Tracker = (*Dir)(nil)

const dirIndexFile = "index.json"

// dirIndex is the content of index.json.
type dirIndex struct {
	Next   int        `json:"next"`
	Issues []dirIssue `json:"issues"`
}

type dirIssue struct {
	Number      int      `json:"number"`
	File        string   `json:"file"`
	Title       string   `json:"title"`
	State       string   `json:"state"`
	Fingerprint string   `json:"fingerprint,omitempty"`
	Labels      []string `json:"labels,omitempty"`
}

// NewDir returns a tracker that writes issues under dir, creating it.
func NewDir(dir string) (*Dir, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("issues directory %q: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("issues directory: %w", err)
	}
	return &Dir{dir: abs, now: time.Now}, nil
}

// Get returns issue number.
func (d *Dir) Get(ctx context.Context, number int) (Issue, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	idx, err := d.load()
	if err != nil {
		return Issue{}, err
	}
	is, err := d.lookup(idx, number, "get")
	if err != nil {
		return Issue{}, err
	}
	return d.issue(*is), nil
}

// Find returns the issue whose body ended with the fingerprint's marker
// when it was created.
func (d *Dir) Find(ctx context.Context, fingerprint string) (Issue, bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	idx, err := d.load()
	if err != nil {
		return Issue{}, false, err
	}
	for _, is := range idx.Issues {
		if is.Fingerprint == fingerprint {
			return d.issue(is), true, nil
		}
	}
	return Issue{}, false, nil
}

// Create writes a new issue file with the next number.
func (d *Dir) Create(ctx context.Context, title, body string, labels []string) (Issue, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	idx, err := d.load()
	if err != nil {
		return Issue{}, err
	}
	is := dirIssue{
		Number: idx.Next,
		File:   fmt.Sprintf("%d-%s.md", idx.Next, slug(title)),
		Title:  title,
		State:  IssueOpen,
		Labels: labels,
	}
	is.Fingerprint, _ = fingerprintIn(body)
	var b strings.Builder
	b.WriteString("# " + title + "\n\n")
	if len(labels) > 0 {
		b.WriteString("Labels: " + strings.Join(labels, ", ") + "\n\n")
	}
	b.WriteString(strings.TrimRight(body, "\n") + "\n")
	if err := writeAtomic(filepath.Join(d.dir, is.File), []byte(b.String())); err != nil {
		return Issue{}, fmt.Errorf("create issue %d: %w", is.Number, err)
	}
	idx.Next++
	idx.Issues = append(idx.Issues, is)
	if err := d.save(idx); err != nil {
		return Issue{}, err
	}
	return d.issue(is), nil
}

// Comment appends a "## Comment <time>" section to the issue's file.
func (d *Dir) Comment(ctx context.Context, number int, body string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	idx, err := d.load()
	if err != nil {
		return err
	}
	is, err := d.lookup(idx, number, "comment on")
	if err != nil {
		return err
	}
	path := filepath.Join(d.dir, is.File)
	old, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("comment on issue %d: %w", number, err)
	}
	section := "\n## Comment " + d.now().UTC().Format(time.RFC3339) + "\n\n" + strings.TrimRight(body, "\n") + "\n"
	if err := writeAtomic(path, append(old, section...)); err != nil {
		return fmt.Errorf("comment on issue %d: %w", number, err)
	}
	return nil
}

// Reopen marks the issue open.
func (d *Dir) Reopen(ctx context.Context, number int) error {
	return d.setState(number, IssueOpen)
}

// setState records the issue's state; tests close issues with it, as a
// person would by editing index.json.
func (d *Dir) setState(number int, state string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	idx, err := d.load()
	if err != nil {
		return err
	}
	is, err := d.lookup(idx, number, "set the state of")
	if err != nil {
		return err
	}
	is.State = state
	return d.save(idx)
}

func (d *Dir) lookup(idx *dirIndex, number int, op string) (*dirIssue, error) {
	for i := range idx.Issues {
		if idx.Issues[i].Number == number {
			return &idx.Issues[i], nil
		}
	}
	return nil, &FileError{Op: fmt.Sprintf("%s issue %d in %s", op, number, d.dir), Status: http.StatusNotFound, Msg: "no such issue"}
}

func (d *Dir) issue(is dirIssue) Issue {
	return Issue{Number: is.Number, URL: filepath.Join(d.dir, is.File), State: is.State}
}

func (d *Dir) load() (*dirIndex, error) {
	path := filepath.Join(d.dir, dirIndexFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &dirIndex{Next: 1}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read issue index: %w", err)
	}
	var idx dirIndex
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("read issue index %s: %w", path, err)
	}
	if idx.Next < 1 {
		return nil, fmt.Errorf("read issue index %s: next issue number %d, want >= 1", path, idx.Next)
	}
	return &idx, nil
}

func (d *Dir) save(idx *dirIndex) error {
	data, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return fmt.Errorf("write issue index: %w", err)
	}
	if err := writeAtomic(filepath.Join(d.dir, dirIndexFile), append(data, '\n')); err != nil {
		return fmt.Errorf("write issue index: %w", err)
	}
	return nil
}

// writeAtomic replaces path with data, so that a crash leaves the old file
// or the new one, never half of one.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// slug is the title in lower-case ASCII words joined by dashes, at most 60
// bytes long.
func slug(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	s := b.String()
	if len(s) > 60 {
		s = s[:60]
		if i := strings.LastIndexByte(s, '-'); i > 30 {
			s = s[:i]
		}
	}
	if s == "" {
		return "issue"
	}
	return s
}
