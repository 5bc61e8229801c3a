package runner

import "context"

// What the pool's tests do to a lease as Measure does.

func (l *Lease) Materialize(ctx context.Context, src Source) (Workspace, error) {
	return l.materialize(ctx, src)
}

func (l *Lease) MarkBuilt() { l.markBuilt() }
