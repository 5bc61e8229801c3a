package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/report"
	"github.com/perfbot/perfbot/store"
)

// File files each finding as an issue and stores it with its new state:
// filed with its issue, kept (not reproduced, below the publish cut-off,
// or not confirmed), or unfiled with the tracker's error, for RetryUnfiled
// to try again. A finding whose regression already has an issue becomes a
// comment on it; one already filed sends nothing. The issue record and
// the finding are written in one transaction, so a filed finding is never
// stored without the record that stops a second issue.
//
// Every finding is tried; the first error (filing or storing) is returned
// after the last. An issue tracker that cannot be set up — a GitHub
// repository configured without its token — is an *record.InputError, returned
// whatever the findings: it is sent nothing, and every finding it would
// have been sent is stored unfiled with that error, for RetryUnfiled once
// the configuration is mended. A
// job that files calls CheckFiling before it measures. Each outcome is one
// line of Progress.
func (b *Bot) File(ctx context.Context, fs []*record.Finding) error {
	filer, setupErr := b.filer()
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	keep(setupErr)
	for _, f := range fs {
		if err := ctx.Err(); err != nil {
			keep(err)
			break
		}
		ferr := filer.File(ctx, f)
		keep(b.storeFiled(*f))
		switch {
		case ferr != nil:
			b.progressf("finding %s: not filed: %v", f.ID, ferr)
			keep(ferr)
		case f.State == record.StateFiled:
			b.progressf("finding %s: issue #%d %s", f.ID, f.Issue, f.IssueURL)
		default:
			b.progressf("finding %s: kept, not filed", f.ID)
		}
	}
	return first
}

// FileRequest is a file job's request: the finding to file (a unique
// prefix of its id), or, with RetryUnfiled, every finding whose filing
// failed. Asked tells two requests for the same finding apart.
type FileRequest struct {
	Finding      string    `json:",omitempty"`
	RetryUnfiled bool      `json:",omitempty"`
	Asked        time.Time `json:",omitzero"`
}

// FileReport is a file job's report: the findings it filed, with their
// new states.
type FileReport struct {
	Findings []record.Finding
}

// FileJob files what req names, as File and RetryUnfiled do, as a job of
// the queue. A request that names both a finding and RetryUnfiled, or
// neither, or a finding that no id or several match, is an
// *record.InputError.
func (b *Bot) FileJob(ctx context.Context, req FileRequest) (*FileReport, error) {
	if (req.Finding == "") == !req.RetryUnfiled {
		return nil, &record.InputError{Err: errors.New("file: name a finding or ask to retry the unfiled ones, not both or neither")}
	}
	var fs []*record.Finding
	var err error
	if req.RetryUnfiled {
		fs, err = b.RetryUnfiled(ctx)
	} else {
		f, ok, ferr := b.Store.Finding(req.Finding)
		switch {
		case errors.Is(ferr, store.ErrAmbiguous):
			return nil, &record.InputError{Err: ferr}
		case ferr != nil:
			return nil, fmt.Errorf("file %s: %w", req.Finding, ferr)
		case !ok:
			return nil, &record.InputError{Err: fmt.Errorf("no finding %q (see perfbot findings)", req.Finding)}
		}
		fs = []*record.Finding{&f}
		err = b.File(ctx, fs)
	}
	rep := &FileReport{}
	for _, f := range fs {
		rep.Findings = append(rep.Findings, *f)
	}
	return rep, err
}

// RetryUnfiled files every stored finding whose filing failed before, as
// File does, and returns them with their new states, newest first.
func (b *Bot) RetryUnfiled(ctx context.Context) ([]*record.Finding, error) {
	fs, err := b.Store.Findings()
	if err != nil {
		return nil, fmt.Errorf("list findings: %w", err)
	}
	var todo []*record.Finding
	for i := range fs {
		if fs[i].State == record.StateUnfiled {
			todo = append(todo, &fs[i])
		}
	}
	b.progressf("%d unfiled findings", len(todo))
	return todo, b.File(ctx, todo)
}

// storeFiled stores f, with the record of its issue when it was filed.
func (b *Bot) storeFiled(f record.Finding) error {
	var err error
	if f.State == record.StateFiled && f.Issue > 0 {
		err = b.Store.PutFindingIssue(f, f.Issue)
	} else {
		err = b.Store.PutFinding(f)
	}
	if err != nil {
		return fmt.Errorf("store finding %s: %w", f.ID, err)
	}
	return nil
}

// CheckFiling reports what stops findings from being filed: a tracker
// that cannot be set up, such as a GitHub repository configured without
// its token (an *record.InputError). A job that is to file its findings calls it
// before it measures anything, so that the mistake costs a second, not a
// bisection. It sends nothing.
func (b *Bot) CheckFiling() error {
	_, err := b.tracker()
	return err
}

// filer files into the configured tracker with the configured labels and
// cut-offs. When the tracker cannot be set up, it files into one that
// fails every call with the reason, which is returned too.
func (b *Bot) filer() (*report.Filer, error) {
	tracker, err := b.tracker()
	if err != nil {
		tracker = unavailableTracker{err}
	}
	cfg := b.Config
	return &report.Filer{
		Tracker:           tracker,
		Index:             b.Store,
		Labels:            cfg.GitHub.Labels,
		PublishConfidence: cfg.Report.PublishConfidence,
		Reopen:            cfg.Report.Reopen,
		Logger:            b.Logger,
		// Whatever perfbot's own environment holds as a secret (the token
		// above all) never reaches an issue, whichever text carries it.
		Secrets: secretValues(b.Config),
	}, err
}

// unavailableTracker stands for a tracker that could not be set up: every
// call fails with the reason, so that the Filer keeps what it would keep
// anyway and stores the rest unfiled, sending nothing.
type unavailableTracker struct{ err error }

var _ report.Tracker = unavailableTracker{}

func (u unavailableTracker) Get(context.Context, int) (report.Issue, error) {
	return report.Issue{}, u.err
}

func (u unavailableTracker) Find(context.Context, string) (report.Issue, bool, error) {
	return report.Issue{}, false, u.err
}

func (u unavailableTracker) Create(context.Context, string, string, []string) (report.Issue, error) {
	return report.Issue{}, u.err
}

func (u unavailableTracker) Comment(context.Context, int, string) error { return u.err }

func (u unavailableTracker) Reopen(context.Context, int) error { return u.err }

// tracker is the configured GitHub repository, authenticated with the
// token in the variable github.token_env names, or else the issues
// directory.
func (b *Bot) tracker() (report.Tracker, error) {
	gh := b.Config.GitHub
	if gh.Repo == "" {
		return report.NewDir(b.Config.IssuesDir)
	}
	token := os.Getenv(gh.TokenEnv)
	if token == "" {
		return nil, &record.InputError{Err: fmt.Errorf("github.repo is %s but $%s is empty: set it to a token with issues:write", gh.Repo, gh.TokenEnv)}
	}
	t, err := report.NewGitHub(report.GitHubOptions{Repo: gh.Repo, Token: token, APIURL: gh.APIURL, Logger: b.Logger})
	if err != nil {
		return nil, &record.InputError{Err: err}
	}
	return t, nil
}

// The Filer reads the store's issue records; File records a new issue
// together with its finding, in one transaction (store.PutFindingIssue).
// Should perfbot die between the two, the fingerprint marker in the issue
// leads the next filing to it.
var _ report.IssueIndex = (*store.DB)(nil)
