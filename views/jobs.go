package views

import (
	"context"
	"errors"
	"fmt"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store"
)

// JobView is a job as a reader sees it: its record and its trace.
type JobView struct {
	store.Job
	Trace []store.TraceLine `json:"trace"`
}

// Jobs lists every job, newest first, without traces.
func (v *Views) Jobs(ctx context.Context) ([]store.Job, error) {
	return v.Store.Jobs()
}

// JobsPage returns the page of Jobs' list that follows the cursor after
// ("" for the first), of at most limit jobs, and the cursor of the next
// page ("" after the last). A cursor it did not return is an
// *record.InputError.
func (v *Views) JobsPage(ctx context.Context, after string, limit int) ([]store.Job, string, error) {
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	jobs, next, err := v.Store.JobsPage(after, limit)
	return jobs, next, pageError(err)
}

// pageError makes a cursor a page read refuses the client's mistake.
func pageError(err error) error {
	if errors.Is(err, store.ErrBadCursor) {
		return &record.InputError{Err: err}
	}
	return err
}

// Job returns the job with the id and its trace.
func (v *Views) Job(ctx context.Context, id string) (JobView, error) {
	j, ok, err := v.Store.Job(id)
	if err != nil {
		return JobView{}, err
	}
	if !ok {
		return JobView{}, &record.InputError{Err: fmt.Errorf("no job %q", id)}
	}
	tr, err := v.Store.Trace(id)
	if err != nil {
		return JobView{}, err
	}
	return JobView{Job: j, Trace: tr}, nil
}
