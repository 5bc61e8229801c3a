package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store"
)

// maxAttempts is how often a job that met an infrastructure failure (a
// host that went away, a store that could not be written) is tried before
// it is left failed.
const maxAttempts = 3

// ErrStopping is returned by a measurement asked for after Stop: the job
// that asked unwinds, stays queued, and resumes where it was on the next
// Work.
var ErrStopping = errors.New("perfbot is stopping: the job stays queued and resumes on restart")

// Enqueue puts a job of kind with its request (the typed request, or its
// JSON) in the persistent queue and returns its id, a hash of the
// request: a job already queued, running or done is not queued twice; a
// failed one is queued again. A request that does not decode as the
// kind's is an *record.InputError.
func (b *Bot) Enqueue(kind record.JobKind, req any) (string, error) {
	t, ok := tasks[kind]
	if !ok {
		return "", &record.InputError{Err: fmt.Errorf("unknown kind of job %q (want one of %v)", kind, Kinds())}
	}
	if raw, isRaw := req.(json.RawMessage); isRaw {
		typed, err := t.decode(raw)
		if err != nil {
			return "", err
		}
		req = typed
	}
	id, raw, err := jobID(kind, req)
	if err != nil {
		return "", err
	}
	j, found, err := b.Store.Job(id)
	if err != nil {
		return "", err
	}
	if found && j.Status != record.JobFailed {
		return id, nil
	}
	now := b.now()
	if !found {
		j = store.Job{ID: id, Kind: kind, Params: raw, Created: now}
	}
	j.Status, j.Updated, j.Attempts, j.Error = record.JobQueued, now, 0, ""
	if err := b.Store.PutJob(j); err != nil {
		return "", fmt.Errorf("enqueue %s: %w", id, err)
	}
	b.progressf("queued job %s (%s)", id, kind)
	return id, nil
}

// CheckRequest reports whether raw decodes as the request of a job of
// kind, as Enqueue would take it.
func CheckRequest(kind record.JobKind, raw json.RawMessage) error {
	t, ok := tasks[kind]
	if !ok {
		return &record.InputError{Err: fmt.Errorf("unknown kind of job %q (want one of %v)", kind, Kinds())}
	}
	_, err := t.decode(raw)
	return err
}

// Pending lists the jobs waiting to run, in the order Work takes them
// (the steps of a job, such as an alert's bisection, resume with it):
// jobs a stopped process left running first (they resume), then queued
// ones, oldest first.
func (b *Bot) Pending() ([]store.Job, error) {
	jobs, err := b.Store.Jobs()
	if err != nil {
		return nil, err
	}
	var out []store.Job
	for _, j := range jobs {
		if j.Parent == "" && (j.Status == record.JobQueued || j.Status == record.JobRunning) {
			out = append(out, j)
		}
	}
	slices.SortStableFunc(out, func(a, c store.Job) int {
		if (a.Status == record.JobRunning) != (c.Status == record.JobRunning) {
			if a.Status == record.JobRunning {
				return -1
			}
			return 1
		}
		return a.Created.Compare(c.Created)
	})
	return out, nil
}

// WorkOne runs the next pending job, if any, and reports whether there was
// one. A job interrupted by Stop or a cancelled ctx stays pending. A job
// that fails on infrastructure is queued again, up to maxAttempts; any
// other failure leaves it failed with its error.
func (b *Bot) WorkOne(ctx context.Context) (bool, error) {
	pending, err := b.Pending()
	if err != nil || len(pending) == 0 {
		return false, err
	}
	j := pending[0]
	// The job runs under its queue record: the jobs it runs as steps (a
	// bisection under an alert, or a bisection queued by the API) are its
	// children and trace into it.
	jb := *b
	jb.job = &jobRun{rec: j}
	j.Status, j.Updated = record.JobRunning, b.now()
	if err := b.Store.PutJob(j); err != nil {
		return true, err
	}
	rep, err := jb.Run(ctx, j.Kind, json.RawMessage(j.Params))
	rec, _, gerr := b.Store.Job(j.ID)
	if gerr != nil {
		return true, gerr
	}
	rec.Updated = b.now()
	switch {
	case err == nil:
		if rec.Status != record.JobDone {
			rec.Status = record.JobDone
			rec.Result, err = json.Marshal(rep)
			if err != nil {
				return true, fmt.Errorf("job %s: report: %w", j.ID, err)
			}
		}
		if rec.Cost == (record.Cost{}) {
			// A request the queue ran under a record of its own measures
			// through the job it starts (a bisection under its resolved
			// revisions): the report says what that cost. Every report
			// embeds record.Cost; one without leaves the cost zero.
			_ = json.Unmarshal(rec.Result, &rec.Cost)
		}
		return true, b.Store.PutJob(rec)
	case b.stopping() || ctx.Err() != nil || errors.Is(err, ErrStopping) || errors.Is(err, context.Canceled):
		rec.Status = record.JobQueued
		return true, b.Store.PutJob(rec)
	}
	rec.Attempts++
	rec.Error, rec.ErrorKind = err.Error(), errorKind(err)
	rec.Updated = b.now()
	if record.IsInfra(err) && rec.Attempts < maxAttempts {
		rec.Status = record.JobQueued
		b.progressf("job %s: infrastructure failure (attempt %d of %d), queued again: %v", j.ID, rec.Attempts, maxAttempts, err)
	} else {
		rec.Status = record.JobFailed
		b.progressf("job %s failed: %v", j.ID, err)
	}
	return true, b.Store.PutJob(rec)
}

// Drain runs pending jobs until none is left, ctx is done or Stop was
// called.
func (b *Bot) Drain(ctx context.Context) error {
	for ctx.Err() == nil && !b.stopping() {
		ran, err := b.WorkOne(ctx)
		if err != nil {
			return err
		}
		if !ran {
			return nil
		}
	}
	return ctx.Err()
}

// Stop asks the running jobs to stop between runs: no new benchmark run
// starts, the run under way finishes and is recorded, and the job unwinds
// with ErrStopping and stays pending.
func (b *Bot) Stop() { b.Oracle.Stop() }

func (b *Bot) stopping() bool { return b.Oracle.stopping() }

// errorKind is a job's failure as store.Job.ErrorKind names it.
func errorKind(err error) string {
	var input *record.InputError
	switch {
	case errors.As(err, &input):
		return "input"
	case record.IsInfra(err):
		return "infra"
	}
	return ""
}
