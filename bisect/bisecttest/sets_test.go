package bisecttest_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/bisect/bisecttest"
	"github.com/perfbot/perfbot/record"
)

func TestSetWorldRecordsAndCounts(t *testing.T) {
	ctx := context.Background()
	w := bisecttest.OneCulprit(4, 2, math.Log(0.9), 0.01, 7)

	none, err := w.Samples(ctx, []string{"h00"}, 0)
	require.NoError(t, err)
	assert.Empty(t, none, "n = 0 returns only what is recorded")

	first, err := w.Samples(ctx, []string{"h00"}, 3)
	require.NoError(t, err)
	require.Len(t, first, 3)
	more, err := w.Samples(ctx, []string{"h00"}, 5)
	require.NoError(t, err)
	require.Len(t, more, 5)
	assert.Equal(t, first, more[:3], "recorded values come back first")
	again, err := w.Samples(ctx, []string{"h00"}, 2)
	require.NoError(t, err)
	assert.Equal(t, more, again, "asking for fewer returns everything recorded")

	culprit, err := w.Samples(ctx, []string{"h03", "h02"}, 20)
	require.NoError(t, err)
	var sum float64
	for _, x := range culprit {
		sum += math.Log(x / 100)
	}
	assert.InDelta(t, math.Log(0.9), sum/20, 0.01, "the culprit shifts the level")

	assert.Equal(t, 2, w.Configurations())
	assert.Equal(t, 25, w.SamplesDrawn())

	same := bisecttest.OneCulprit(4, 2, math.Log(0.9), 0.01, 7)
	replay, err := same.Samples(ctx, []string{"h00"}, 5)
	require.NoError(t, err)
	assert.Equal(t, more, replay, "the seed decides the noise")
}

func TestSetWorldBrokenAndBadInput(t *testing.T) {
	ctx := context.Background()
	w := bisecttest.NeedsDependency(4, 1, 3, math.Log(0.95), 0.02, 1)

	_, err := w.Samples(ctx, []string{"h01"}, 2)
	assert.ErrorIs(t, err, record.ErrBroken)
	xs, err := w.Samples(ctx, []string{"h01", "h03"}, 2)
	require.NoError(t, err)
	assert.Len(t, xs, 2)
	assert.Equal(t, 2, w.Configurations(), "a broken configuration counts as a build")

	_, err = w.Samples(ctx, []string{"h09"}, 1)
	assert.ErrorContains(t, err, `unknown element "h09"`)
	_, err = w.Samples(ctx, []string{"h00", "h00"}, 1)
	assert.ErrorContains(t, err, `element "h00" twice`)
}

func TestSetWorldOnlyTogether(t *testing.T) {
	ctx := context.Background()
	w := bisecttest.Pair(4, 0, 3, math.Log(0.5), 0.001, 1)
	for _, tc := range []struct {
		set  []string
		want float64
	}{
		{nil, 100}, {[]string{"h00"}, 100}, {[]string{"h03"}, 100}, {[]string{"h00", "h03"}, 50},
	} {
		xs, err := w.Samples(ctx, tc.set, 1)
		require.NoError(t, err)
		assert.InDelta(t, tc.want, xs[0], tc.want*0.01, "%v", tc.set)
	}
}

func TestRandomDeps(t *testing.T) {
	ids := bisecttest.Hunks(200)
	deps := bisecttest.RandomDeps(ids, 0.3, rand.New(rand.NewPCG(1, 2)))
	assert.InDelta(t, 60, len(deps), 20)
	for e, needs := range deps {
		require.Len(t, needs, 1)
		assert.NotEqual(t, e, needs[0])
	}
	assert.Empty(t, bisecttest.RandomDeps(ids[:1], 1, rand.New(rand.NewPCG(1, 2))))
}
