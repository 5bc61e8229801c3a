package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-github/v60/github"

	"github.com/perfbot/perfbot/record"
)

// maxPatchLines bounds the lines of a revert's patch shown in an issue or
// a comment; the pull request holds all of it.
const maxPatchLines = 300

// revertView is what the revert templates see.
type revertView struct {
	*view
	Culprit record.Culprit
	Revert  *record.RevertOnTip
	// Patch is the revert's patch, cut to maxPatchLines.
	Patch string
	// Changed is how the verdict differs from the one before; Closing is
	// set when the comment closes the issue; IssueURL is the finding's
	// issue.
	Changed  string
	Closing  bool
	IssueURL string
}

// Sentence is the verdict in words.
func (v revertView) Sentence() string { return v.Revert.Text() }

// RevertOf is the revert section's view of culprit c, for the culprits
// section of an issue.
func (v *view) RevertOf(c record.Culprit) revertView {
	rv := revertView{view: v, Culprit: c, Revert: c.Revert}
	if c.Revert != nil && c.Revert.Patch != "" {
		rv.Patch = cutLines(c.Revert.Patch, maxPatchLines)
	}
	return rv
}

// RevertComment is the comment that tells an issue the proof by revert of
// its culprit: the verdict, changed says how it differs from the one
// before ("" for the first), and closing adds that the issue is closed.
func RevertComment(f *record.Finding, changed string, closing bool, secrets []string) (string, error) {
	v, err := revertViewOf(f, secrets)
	if err != nil {
		return "", err
	}
	v.Changed, v.Closing = changed, closing
	return v.execute("revert_comment")
}

// RevertPR is the title and body of the draft pull request that proposes
// the revert of f's culprit, with the evidence: the culprit's effect and
// the measured recovery on the tip, and the issue it answers.
func RevertPR(f *record.Finding, secrets []string) (title, body string, err error) {
	v, err := revertViewOf(f, secrets)
	if err != nil {
		return "", "", err
	}
	if v.Revert.Verdict != record.RevertRestores || v.Revert.Effect == nil {
		return "", "", fmt.Errorf("finding %s: the revert does not restore the speed (%s): no pull request", f.ID, v.Revert.Verdict)
	}
	v.IssueURL = f.IssueURL
	body, err = v.execute("revert_pr")
	if err != nil {
		return "", "", err
	}
	title = fmt.Sprintf("Revert %q: recovers %s in %s", v.Culprit.Commit.Subject, formatPct(v.Revert.Effect.Pct), f.Metric)
	return disarmMarkers(v.scrub(title)), body, nil
}

func revertViewOf(f *record.Finding, secrets []string) (revertView, error) {
	if len(f.Culprits) != 1 || f.Culprits[0].Revert == nil {
		return revertView{}, fmt.Errorf("finding %s has no revert on tip", f.ID)
	}
	return newView(f, secrets).RevertOf(f.Culprits[0]), nil
}

// execute renders one of the revert templates, scrubbed and disarmed as
// an issue body is, without the marker: only the issue claims the
// regression.
func (v revertView) execute(name string) (string, error) {
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, name, v); err != nil {
		return "", fmt.Errorf("render %s of finding %s: %w", name, v.FindingID, err)
	}
	return strings.TrimRight(disarmMarkers(v.scrub(b.String())), "\n") + "\n", nil
}

// Closer closes an issue whose regression is gone.
type Closer interface {
	Close(ctx context.Context, number int) error
}

var (
	_ Closer = (*GitHub)(nil)
	_ Closer = (*Dir)(nil)
)

// Close sets issue number's state to closed.
func (g *GitHub) Close(ctx context.Context, number int) error {
	return g.call(ctx, fmt.Sprintf("close issue %d of %s", number, g.repo()), func(c *github.Client, _ int) (*github.Response, error) {
		_, resp, err := c.Issues.Edit(ctx, g.owner, g.name, number, &github.IssueRequest{State: github.String(IssueClosed), StateReason: github.String("completed")})
		return resp, err
	})
}

// Close marks the issue closed.
func (d *Dir) Close(ctx context.Context, number int) error {
	return d.setState(number, IssueClosed)
}

// DraftPR is a pull request to open as a draft.
type DraftPR struct {
	Title, Body string
	// Head is the branch with the change ("owner:branch" for a branch of
	// another repository); Base the branch it would merge into.
	Head, Base string
}

// PullRequester opens draft pull requests. It has no way to open any
// other kind.
type PullRequester interface {
	OpenDraft(ctx context.Context, pr DraftPR) (record.PullRequest, error)
}

var _ PullRequester = (*GitHub)(nil)

// OpenDraft opens pr as a draft pull request; an open pull request from
// the same head is returned as it is rather than opened twice. Title and
// body are sent as given: RevertPR scrubs what it renders.
func (g *GitHub) OpenDraft(ctx context.Context, pr DraftPR) (record.PullRequest, error) {
	if pr.Head == "" || pr.Base == "" {
		return record.PullRequest{}, errors.New("open draft pull request: head and base are required")
	}
	op := "open draft pull request in " + g.repo()
	var out *github.PullRequest
	err := g.call(ctx, op, func(c *github.Client, _ int) (*github.Response, error) {
		head := pr.Head
		if !strings.Contains(head, ":") {
			head = g.owner + ":" + head
		}
		open, resp, err := c.PullRequests.List(ctx, g.owner, g.name, &github.PullRequestListOptions{State: "open", Head: head, Base: pr.Base})
		if err != nil {
			return resp, err
		}
		if len(open) > 0 {
			out = open[0]
			return resp, nil
		}
		out, resp, err = c.PullRequests.Create(ctx, g.owner, g.name, &github.NewPullRequest{
			Title: github.String(pr.Title),
			Body:  github.String(pr.Body),
			Head:  github.String(pr.Head),
			Base:  github.String(pr.Base),
			Draft: github.Bool(true),
		})
		return resp, err
	})
	if err != nil {
		return record.PullRequest{}, err
	}
	return record.PullRequest{Number: out.GetNumber(), URL: out.GetHTMLURL(), Branch: pr.Head, Draft: out.GetDraft()}, nil
}
