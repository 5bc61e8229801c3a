package report

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// Issue is an issue as the Filer needs to know it.
type Issue struct {
	Number int
	URL    string
	State  string // IssueOpen or IssueClosed
}

// The states of an Issue.
const (
	IssueOpen   = "open"
	IssueClosed = "closed"
)

// Tracker is where issues are filed: GitHub, or a directory of Markdown
// files. Implementations return a *FileError for a refusal that retrying
// will not change.
type Tracker interface {
	// Get returns issue number.
	Get(ctx context.Context, number int) (Issue, error)
	// Find returns the issue whose body carries the fingerprint marker
	// where Render puts it, as the last line.
	Find(ctx context.Context, fingerprint string) (Issue, bool, error)
	// Create files a new issue.
	Create(ctx context.Context, title, body string, labels []string) (Issue, error)
	// Comment adds a comment to issue number.
	Comment(ctx context.Context, number int, body string) error
	// Reopen opens closed issue number again.
	Reopen(ctx context.Context, number int) error
}

// FileError is a tracker's refusal that retrying will not change: bad
// credentials, missing permission, an unknown repository or issue, or a
// request the tracker rejects as invalid. It never holds a credential.
type FileError struct {
	Op     string // what was being done, e.g. "create issue in owner/name"
	Status int    // the HTTP status, or 0 when no server answered
	Msg    string
}

func (e *FileError) Error() string {
	if e.Status == 0 {
		return e.Op + ": " + e.Msg
	}
	return fmt.Sprintf("%s: %d %s", e.Op, e.Status, e.Msg)
}

// IssueGone reports whether err is a tracker's answer that the issue it
// was asked about does not exist: deleted, or a number it never had. Any
// other error says nothing about the issue.
func IssueGone(err error) bool {
	var fe *FileError
	return errors.As(err, &fe) && (fe.Status == http.StatusNotFound || fe.Status == http.StatusGone)
}
