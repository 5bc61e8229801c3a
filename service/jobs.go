package service

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/store"
)

// A task is one kind of job in the table the Bot runs: it decodes its
// request from JSON and runs alone. The command line calls the typed
// methods (Bisect, Hunks, EnvBisect); a queue or the HTTP API starts the
// same work through Run with the request it was given.
type task struct {
	decode func(raw json.RawMessage) (any, error)
	run    func(ctx context.Context, b *Bot, req json.RawMessage) (any, error)
}

// tasks is the table of jobs, by kind.
var tasks map[record.JobKind]task

// The table refers to jobs that enqueue jobs, which look kinds up in it:
// it is filled in at init to break the cycle.
func init() {
	tasks = map[record.JobKind]task{
		record.JobBisect:    taskOf((*Bot).Bisect),
		record.JobHunks:     taskOf((*Bot).Hunks),
		record.JobEnvBisect: taskOf((*Bot).EnvBisect),
		record.JobMeasure:   taskOf((*Bot).MeasureJob),
		record.JobAlert:     taskOf((*Bot).Alert),
		record.JobNightly:   taskOf((*Bot).NightlyJob),
		record.JobRevert:    taskOf((*Bot).Revert),
		record.JobFile:      taskOf((*Bot).FileJob),
	}
}

func taskOf[Req, Rep any](run func(*Bot, context.Context, Req) (*Rep, error)) task {
	decode := func(raw json.RawMessage) (Req, error) {
		var req Req
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return req, &record.InputError{Err: fmt.Errorf("request: %w", err)}
		}
		return req, nil
	}
	return task{
		decode: func(raw json.RawMessage) (any, error) { return decode(raw) },
		run: func(ctx context.Context, b *Bot, raw json.RawMessage) (any, error) {
			req, err := decode(raw)
			if err != nil {
				return nil, err
			}
			return run(b, ctx, req)
		},
	}
}

// Kinds lists the kinds of job Run runs, in name order.
func Kinds() []record.JobKind {
	kinds := make([]record.JobKind, 0, len(tasks))
	for k := range tasks {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	return kinds
}

// Run runs the job of the kind with its request in JSON (a BisectRequest,
// HunksRequest or EnvBisectRequest) and returns its report.
func (b *Bot) Run(ctx context.Context, kind record.JobKind, req json.RawMessage) (any, error) {
	t, ok := tasks[kind]
	if !ok {
		return nil, &record.InputError{Err: fmt.Errorf("unknown kind of job %q (want one of %v)", kind, Kinds())}
	}
	return t.run(ctx, b, req)
}

// jobRun is a job while it runs: its record, and the job that started it,
// whose trace its lines also go to.
type jobRun struct {
	parent *jobRun
	// prior is what the job's earlier attempts cost; meter counts this
	// attempt. Their sum is persisted with every line of the job's trace,
	// so that an attempt cut short still leaves its cost behind.
	prior record.Cost
	meter meter

	mu  sync.Mutex // guards rec: a child job's lines persist its parents
	rec store.Job
}

// cost is what the job has cost so far, over all its attempts.
func (j *jobRun) cost() record.Cost {
	return j.prior.Plus(j.meter.read())
}

// costed is a report that carries its job's cost (it embeds record.Cost):
// runJob adds the cost of the job's earlier attempts to what the attempt
// that finished measured.
type costed interface {
	Add(record.Cost)
}

// runJob runs fn as the job of kind identified by params (the job's id is a
// hash of them, so the same request finds the same job):
//
//   - a job that finished returns the report it stored and measures
//     nothing again;
//   - otherwise fn runs on a Bot whose progress lines also go to the job's
//     trace, with the state the job saved before (load decodes it) and a
//     save function that persists new state; the job's record ends done
//     with its report, or failed;
//   - the job's cost (runs, builds, wall time) is persisted with every
//     line of its trace, and the report of a job that ran in several
//     attempts counts them all.
func runJob[R any](b *Bot, kind record.JobKind, params any, fn func(jb *Bot, load func(any), save func(any)) (*R, error)) (*R, error) {
	id, raw, err := jobID(kind, params)
	if err != nil {
		return nil, err
	}
	rec, found, err := b.Store.Job(id)
	if err != nil {
		return nil, fmt.Errorf("read job %s: %w", id, err)
	}
	if found && rec.Status == record.JobDone && len(rec.Result) > 0 {
		// A report an older perfbot wrote in another layout has fields
		// this one does not know: it is not taken for this one's.
		var rep R
		dec := json.NewDecoder(bytes.NewReader(rec.Result))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rep); err == nil {
			b.progressf("job %s finished %s; its report stands and nothing is measured again", id, rec.Updated.Format(time.RFC3339))
			return &rep, nil
		}
		// A report an older perfbot wrote may not decode: run again.
	}
	// The queue runs a job under its own record; a job that another one
	// runs as a step is that one's child.
	parent := b.job
	if parent != nil && parent.rec.ID == id {
		parent = parent.parent
	}
	if !found {
		rec = store.Job{ID: id, Kind: kind, Params: raw, Created: b.now()}
		if parent != nil {
			rec.Parent = parent.rec.ID
		}
	}
	jb := *b
	jb.job = &jobRun{rec: rec, parent: parent}
	if b.Oracle != nil {
		if parent == nil {
			// A new job tries the hosts that left the pool during the last.
			b.Oracle.pool.Retry()
		}
		defer b.Oracle.watchHosts(func(s runner.HostState) { jb.progressf("%s", s) })()
	}
	if found && rec.Status != record.JobDone {
		jb.job.prior = rec.Cost
	}
	jb.job.meter = jb.startMeter()
	if found {
		// A job with a trace ran before; one the queue just took has none.
		if tr, err := b.Store.Trace(id); err == nil && len(tr) > 0 {
			jb.progressf("resuming job %s (%s, last updated %s)", id, rec.Status, rec.Updated.Format(time.RFC3339))
		}
	}
	put := func(status record.JobState, state, result any) {
		jr := jb.job
		jr.mu.Lock()
		defer jr.mu.Unlock()
		j := &jr.rec
		j.Status, j.Updated, j.Cost = status, b.now(), jr.cost()
		if state != nil {
			j.State, _ = json.Marshal(state) // the states are plain records
		}
		if result != nil {
			j.Result, _ = json.Marshal(result)
		}
		if err := b.Store.PutJob(*j); err != nil {
			// Every measurement is in the store already: a job that cannot
			// persist its state only loses the shortcut on resume.
			b.Logger.Warn("persist job", "job", j.ID, "err", err)
		}
	}
	load := func(state any) {
		if len(rec.State) > 0 {
			// A state an older perfbot wrote may not decode; the work it
			// saved is then done again.
			_ = json.Unmarshal(rec.State, state)
		}
	}
	put(record.JobRunning, nil, nil)
	rep, err := fn(&jb, load, func(state any) { put(record.JobRunning, state, nil) })
	switch {
	case errors.Is(err, ErrStopping) || errors.Is(err, context.Canceled):
		// Interrupted, not failed: every run so far is recorded and the
		// job resumes from them.
		put(record.JobQueued, nil, nil)
		return nil, err
	case err != nil:
		put(record.JobFailed, nil, nil)
		return nil, err
	}
	if c, ok := any(rep).(costed); ok && jb.job.prior != (record.Cost{}) {
		c.Add(jb.job.prior)
		jb.progressf("job %s: %d runs, %d builds and %.0fs over all its attempts", id, jb.job.cost().Runs, jb.job.cost().Builds, jb.job.cost().WallSeconds)
	}
	put(record.JobDone, nil, rep)
	return rep, nil
}

// jobID is the id of the job of kind with params: a hash of both, so that
// the same request finds the same job.
func jobID(kind record.JobKind, params any) (string, json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return "", nil, fmt.Errorf("job parameters: %w", err)
	}
	sum := sha256.Sum256(append([]byte(string(kind)+"|"), raw...))
	return string(kind) + "-" + hex.EncodeToString(sum[:6]), raw, nil
}

// trace appends a progress line to the trace of the running job and of the
// jobs that started it.
func (b *Bot) trace(line string) {
	for j := b.job; j != nil; j = j.parent {
		j.mu.Lock()
		if err := b.Store.AppendTrace(j.rec.ID, store.TraceLine{Time: b.now(), Text: line}); err != nil {
			b.Logger.Warn("trace job", "job", j.rec.ID, "err", err)
		}
		// The cost so far goes with every line: an attempt killed before
		// it ends leaves what it measured for the next one to count.
		if c := j.cost(); j.meter.b != nil && (c.Runs != j.rec.Cost.Runs || c.Builds != j.rec.Cost.Builds) {
			j.rec.Cost = c
			if err := b.Store.PutJob(j.rec); err != nil {
				b.Logger.Warn("persist job cost", "job", j.rec.ID, "err", err)
			}
		}
		j.mu.Unlock()
	}
}

var (
	_ costed = (*Bisection)(nil)
	_ costed = (*HunksReport)(nil)
	_ costed = (*EnvBisectReport)(nil)
	_ costed = (*NightReport)(nil)
)
