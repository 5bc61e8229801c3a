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
func (v *Views) Jobs(ctx context.Context) ([]store.Job, error) {
	return v.Store.Jobs()
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
