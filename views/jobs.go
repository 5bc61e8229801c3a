package views

import (
	"context"
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
func (b *Views) Jobs(ctx context.Context) ([]store.Job, error) {
	return b.Store.Jobs()
}

// Job returns the job with the id and its trace.
func (b *Views) Job(ctx context.Context, id string) (JobView, error) {
	j, ok, err := b.Store.Job(id)
	if err != nil {
		return JobView{}, err
	}
	if !ok {
		return JobView{}, &record.InputError{Err: fmt.Errorf("no job %q", id)}
	}
	tr, err := b.Store.Trace(id)
	if err != nil {
		return JobView{}, err
	}
	return JobView{Job: j, Trace: tr}, nil
}
