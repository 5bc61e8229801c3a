package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/perfbot/perfbot/record"
)

// NightlyRequest is a scheduled cycle: the second the schedule fired (a
// cycle asked for twice in one second is one job).
type NightlyRequest struct {
	Scheduled time.Time `json:"scheduled"`
}

// NightlyJob runs the cycle of req as a job of the queue: it is recorded
// with its report and trace. An interrupted cycle runs again from the
// start (a killed cycle records no night, see Nightly).
func (b *Bot) NightlyJob(ctx context.Context, req NightlyRequest) (*NightReport, error) {
	return runJob(b, record.JobNightly, req, func(jb *Bot, _, _ func(any)) (*NightReport, error) {
		return jb.Nightly(ctx)
	})
}

// ServeOptions tunes Serve.
type ServeOptions struct {
	// Grace is how long a stopping Serve waits for the run under way to
	// finish before it cancels it; zero is one minute.
	Grace time.Duration
	// Poll is how often an idle worker looks at the queue for jobs that
	// other processes put there; zero is five seconds.
	Poll time.Duration
	// Wake, when it receives, makes the worker look at the queue now (the
	// HTTP API sends on it after enqueueing).
	Wake <-chan struct{}
}

// Serve runs the service until ctx is done: the configured cron schedule
// enqueues a nightly cycle, and one worker runs the queue's jobs one at a
// time (jobs left running by a process that stopped resume first). The
// schedule's jobs are wrapped in cron.Recover, outermost, so that a panic
// anywhere in a cycle, the skipping wrapper included, is logged and the
// schedule goes on, and cron.SkipIfStillRunning, so that a cycle still
// running when the next is due makes that one a no-op.
//
// When ctx is done Serve stops gracefully: the schedule stops, no new
// benchmark run starts, the run under way finishes and is recorded
// (within Grace; after that it is cancelled and not recorded), and the
// interrupted job stays queued for the next Serve. Serve returns nil after
// a graceful stop.
func (b *Bot) Serve(ctx context.Context, opts ServeOptions) error {
	if opts.Grace <= 0 {
		opts.Grace = time.Minute
	}
	if opts.Poll <= 0 {
		opts.Poll = 5 * time.Second
	}
	b.Oracle.resume()
	logger := cronLogger{b.Logger}
	c := cron.New(cron.WithLogger(logger), cron.WithChain(cron.Recover(logger), cron.SkipIfStillRunning(logger)))
	// The work runs on a context of its own, cancelled only when the
	// grace period is over.
	work, hardStop := context.WithCancel(context.WithoutCancel(ctx))
	defer hardStop()
	wake := make(chan struct{}, 1)
	poke := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	if _, err := c.AddFunc(b.Config.Schedule, func() { b.scheduled(work, poke) }); err != nil {
		return &record.InputError{Err: fmt.Errorf("schedule %q: %w", b.Config.Schedule, err)}
	}
	c.Start()
	b.progressf("serving: schedule %q, next cycle %s", b.Config.Schedule, c.Entries()[0].Next.Format(time.RFC3339))

	done := make(chan error, 1)
	go func() { done <- b.workLoop(work, wake, opts) }()
	go func() {
		for {
			select {
			case <-opts.Wake:
				poke()
			case <-work.Done():
				return
			}
		}
	}()

	select {
	case err := <-done:
		c.Stop()
		return err
	case <-ctx.Done():
	}
	b.progressf("stopping: the run under way finishes and is recorded; the job resumes on the next start")
	c.Stop()
	b.Stop()
	poke()
	select {
	case err := <-done:
		return err
	case <-time.After(opts.Grace):
		b.progressf("stopping: the run under way did not finish within %s; cancelling it", opts.Grace)
		hardStop()
		<-done
		return nil
	}
}

// scheduled is the cron job: it enqueues tonight's cycle, wakes the
// worker and waits until the cycle's job is no longer pending, so that
// SkipIfStillRunning sees a cycle as running for as long as it runs.
func (b *Bot) scheduled(ctx context.Context, poke func()) {
	id, err := b.Enqueue(record.JobNightly, NightlyRequest{Scheduled: b.now().UTC().Truncate(time.Second)})
	if err != nil {
		b.Logger.Error("enqueue the nightly cycle", "err", err)
		return
	}
	poke()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		j, ok, err := b.Store.Job(id)
		if err != nil || !ok || (j.Status != record.JobQueued && j.Status != record.JobRunning) || b.stopping() {
			return
		}
	}
}

// workLoop runs pending jobs until the Bot stops or ctx is done.
func (b *Bot) workLoop(ctx context.Context, wake <-chan struct{}, opts ServeOptions) error {
	for ctx.Err() == nil && !b.stopping() {
		ran, err := b.WorkOne(ctx)
		switch {
		case err != nil && errors.Is(err, context.Canceled):
			return nil
		case err != nil:
			// The store could not be read or written: log it and try
			// again later rather than bring the service down.
			b.Logger.Error("work the queue", "err", err)
		case ran:
			continue
		}
		select {
		case <-ctx.Done():
		case <-wake:
		case <-time.After(opts.Poll):
		}
	}
	return nil
}

// cronLogger is cron's logger over slog.
type cronLogger struct{ l *slog.Logger }

func (c cronLogger) Info(msg string, kv ...any) { c.l.Debug("cron: "+msg, kv...) }
func (c cronLogger) Error(err error, msg string, kv ...any) {
	c.l.Error("cron: "+msg, append([]any{"err", err}, kv...)...)
}
