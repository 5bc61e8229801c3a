package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/testbed"
)

// TestbedMeasurer returns the testbed's view of the Oracle: each call runs
// repeats more benchmark invocations of a commit and returns their values.
func (b *Bot) TestbedMeasurer() testbed.Measurer { return testbedMeasurer{b} }

type testbedMeasurer struct{ b *Bot }

var _ testbed.Measurer = testbedMeasurer{}

func (m testbedMeasurer) Measure(ctx context.Context, commit string, repeats int) (map[string][]float64, error) {
	vals, err := m.b.freshRuns(ctx, record.Target{Commit: commit}, repeats)
	if errors.Is(err, bisect.ErrBroken) {
		return nil, fmt.Errorf("%w: %v", testbed.ErrBuildFailed, err)
	}
	return vals, err
}

// freshRuns runs n more benchmark invocations of t, whatever the store
// holds already, and returns the values of those runs by metric.
func (b *Bot) freshRuns(ctx context.Context, t record.Target, n int) (map[string][]float64, error) {
	spec := b.Oracle.SpecHash()
	before, err := b.Store.Cached(spec, t.Key())
	if err != nil {
		return nil, err
	}
	if err := b.Oracle.Ensure(ctx, t, len(before.OK)+n); err != nil {
		return nil, err
	}
	after, err := b.Store.Cached(spec, t.Key())
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
