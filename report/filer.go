package report

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/perfbot/perfbot/internal/num"
	"github.com/perfbot/perfbot/record"
)

// IssueIndex tells which issue each fingerprint was filed as. The store
// implements it, and its caller writes it: the record of a new issue is
// stored with its finding, in one transaction. The fingerprint marker in
// the issue body is the fallback when the record is missing.
type IssueIndex interface {
	IssueFor(fingerprint string) (number int, ok bool, err error)
}

// Filer files findings as issues, one issue per regression: a finding whose
// fingerprint already has an issue becomes a comment on it.
type Filer struct {
	Tracker Tracker
	// Index is consulted before the tracker is searched; nil means the
	// tracker's Find alone.
	Index IssueIndex
	// Labels go on every new issue, followed by one "component:<name>"
	// label per component of the finding.
	Labels []string
	// PublishConfidence is the cut-off below which a finding is kept
	// rather than filed; zero means record.DefaultPublishConfidence.
	PublishConfidence float64
	// Reopen reopens a closed issue whose regression is found again;
	// otherwise the comment says that it came back and the issue stays
	// closed.
	Reopen bool
	// Secrets are values that must never appear in an issue or a comment:
	// the values of the secret variables of the benchmarks' environment
	// (secret.FromEnv(os.Environ()) gives them), a database password. Every
	// occurrence in what is rendered is replaced by secret.Mask, as is
	// anything shaped like a credential (see secret.Scrub) whether listed
	// here or not.
	Secrets []string
	Logger  *slog.Logger
}

// File files fd and records the outcome in fd: PublishConfidence is set to
// the Filer's cut-off; State is kept for a finding that is not reproduced or
// below the cut-off, filed with Issue and IssueURL on success, and unfiled
// with FileError when the tracker failed, whose error is returned too. Filing a finding that is already filed does
// nothing, so a retried job never comments twice.
func (f *Filer) File(ctx context.Context, fd *record.Finding) error {
	if fd == nil {
		return errors.New("file finding: nil finding")
	}
	fp := fd.Fingerprint()
	if fd.ID == "" {
		fd.ID = fd.DerivedID()
	}
	log := f.logger().With("finding", fd.ID)
	fd.PublishConfidence = f.cutOff()
	if reason := f.keepReason(fd); reason != "" {
		fd.State = record.StateKept
		log.Info("finding kept, not filed", "reason", reason)
		return nil
	}
	if fd.State == record.StateFiled && fd.Issue != 0 {
		return nil
	}
	title, body, err := RenderScrubbed(fd, f.Secrets)
	if err != nil {
		return f.fail(fd, err)
	}
	iss, found, err := f.existing(ctx, fp, log)
	if err != nil {
		return f.fail(fd, err)
	}
	if found {
		err = f.update(ctx, fd, iss, body)
		log.Info("finding filed as a comment", "issue", iss.Number, "state", iss.State)
	} else {
		iss, err = f.create(ctx, fd, fp, title, body, log)
	}
	if err != nil {
		return f.fail(fd, err)
	}
	fd.State, fd.Issue, fd.IssueURL, fd.FileError = record.StateFiled, iss.Number, iss.URL, ""
	return nil
}

func (f *Filer) cutOff() float64 {
	if f.PublishConfidence == 0 {
		return record.DefaultPublishConfidence
	}
	return f.PublishConfidence
}

// keepReason says why fd is not filed, or "".
func (f *Filer) keepReason(fd *record.Finding) string {
	if fd.Outcome == record.OutcomeNotReproduced {
		return "not reproduced"
	}
	if cut := f.cutOff(); fd.Confidence < cut {
		return fmt.Sprintf("confidence %s is below the publish cut-off %s", num.Confidence(fd.Confidence), num.Confidence(cut))
	}
	if fd.Unconfirmed != "" {
		return "not confirmed: " + fd.Unconfirmed
	}
	if len(fd.Culprits) > 0 && !slices.ContainsFunc(fd.Culprits, func(c record.Culprit) bool { return !c.NoCodeChange && !c.BuildIdentical }) {
		return "no culprit changes code: the measured change came from noise or the environment"
	}
	return ""
}

// existing finds the issue of fingerprint fp: the index first, then the
// tracker's own search (the finding then stored with its issue repairs a
// missing index record).
func (f *Filer) existing(ctx context.Context, fp string, log *slog.Logger) (Issue, bool, error) {
	if f.Index != nil {
		n, ok, err := f.Index.IssueFor(fp)
		if err != nil {
			return Issue{}, false, fmt.Errorf("look up the issue of %s: %w", fp, err)
		}
		if ok {
			iss, err := f.Tracker.Get(ctx, n)
			switch {
			case err == nil:
				return iss, true, nil
			case IssueGone(err):
				log.Warn("recorded issue is gone, searching the tracker", "issue", n)
			default:
				return Issue{}, false, err
			}
		}
	}
	iss, ok, err := f.Tracker.Find(ctx, fp)
	if err != nil || !ok {
		return Issue{}, false, err
	}
	return iss, true, nil
}

// update puts the new evidence on an existing issue.
func (f *Filer) update(ctx context.Context, fd *record.Finding, iss Issue, body string) error {
	note := "perfbot found this regression again"
	switch {
	case iss.State == IssueClosed && f.Reopen:
		// Reopen first: a comment that says "reopened" must not be left on
		// an issue that failed to reopen.
		if err := f.Tracker.Reopen(ctx, iss.Number); err != nil {
			return err
		}
		note += " and reopened this issue."
	case iss.State == IssueClosed:
		note += " after this issue was closed. It stays closed; reopen it if the fix did not hold."
	default:
		note += "."
	}
	if !fd.Created.IsZero() {
		note += " (" + formatDate(fd.Created) + ")"
	}
	return f.Tracker.Comment(ctx, iss.Number, "**"+note+"**\n\n"+body)
}

func (f *Filer) create(ctx context.Context, fd *record.Finding, fp, title, body string, log *slog.Logger) (Issue, error) {
	labels := append([]string(nil), f.Labels...)
	for _, c := range Components(fd) {
		labels = append(labels, "component:"+c)
	}
	iss, err := f.Tracker.Create(ctx, title, body, labels)
	if err != nil {
		return Issue{}, err
	}
	log.Info("finding filed", "issue", iss.Number, "url", iss.URL)
	return iss, nil
}

func (f *Filer) fail(fd *record.Finding, err error) error {
	fd.State = record.StateUnfiled
	fd.FileError = err.Error()
	return fmt.Errorf("file finding %s: %w", fd.ID, err)
}

func (f *Filer) logger() *slog.Logger {
	if f.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return f.Logger
}
