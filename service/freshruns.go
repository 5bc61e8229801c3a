package service

import (
	"context"
	"fmt"

	"github.com/perfbot/perfbot/record"
)

// FreshRuns runs n more benchmark invocations of t, whatever the store
// holds already, and returns the values of those runs by metric. A target
// that does not build gives an error wrapping record.ErrBroken. A night's
// runs and the testbed's own checks use it: they need runs taken now, side
// by side, not the ones a search took earlier.
func (b *Bot) FreshRuns(ctx context.Context, t record.Target, n int) (map[string][]float64, error) {
	before, err := b.Store.Cached(b.Oracle.SpecHash(), t.Key())
	if err != nil {
		return nil, fmt.Errorf("read cache of %s: %w", t.Short(), err)
	}
	after, err := b.Oracle.Recorded(ctx, t, "", len(before.OK)+n)
	if err != nil {
		return nil, err
	}
	seen := map[uint64]bool{}
	for _, r := range before.OK {
		seen[r.ID] = true
	}
	out := map[string][]float64{}
	for _, r := range after.OK {
		if seen[r.ID] {
			continue
		}
		for metric, v := range r.Values {
			out[metric] = append(out[metric], v)
		}
	}
	return out, nil
}
