package demo

import (
	"context"
	"errors"
	"fmt"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/service"
	"github.com/perfbot/perfbot/testbed"
)

// Measurer is the testbed's view of a bot's Oracle, for testbed.Verify:
// each call runs repeats more benchmark invocations of a commit and
// returns their values.
func Measurer(b *service.Bot) testbed.Measurer { return measurer{b} }

type measurer struct{ b *service.Bot }

var _ testbed.Measurer = measurer{}

func (m measurer) Measure(ctx context.Context, commit string, repeats int) (map[string][]float64, error) {
	vals, err := m.b.FreshRuns(ctx, record.Target{Commit: commit}, repeats)
	if errors.Is(err, record.ErrBroken) {
		return nil, fmt.Errorf("%w: %v", testbed.ErrBuildFailed, err)
	}
	return vals, err
}
