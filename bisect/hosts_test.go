package bisect_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/bisect/bisecttest"
	"github.com/perfbot/perfbot/record"
)

// TestBisectHosts: hosts of one kind differ in speed by as much as the
// change searched for. Each scenario states how many of its seeded
// searches must name the one culprit. The scenario "ends cached on a
// faster host" fails without the host handling: the search's own runs all
// come from a host 7% slower than the one that ran the ends' cached runs,
// so a probe looks like the bad end. Without the host offsets half of its
// searches name a wrong culprit; without the ends measured on the search's
// host its probes count in nothing and the budget runs out
// (TestHostHandlingMatters shows what a search blind to hosts names there).
func TestBisectHosts(t *testing.T) {
	drop := []bisecttest.Change{changeAt(40, 0.95)}
	for _, tc := range []struct {
		name   string
		speeds []float64 // History.Hosts
		hosts  []string  // Options.Hosts
		cached int       // interleaved runs of each end on h0, recorded before the search
		seeds  int
		right  int // searches that must name c0040 alone
	}{
		{name: "two hosts 6% apart", speeds: []float64{1, 0.94}, hosts: []string{"h0", "h1"}, seeds: 20, right: 19},
		{name: "four hosts 5% apart", speeds: []float64{1, 0.953, 0.984, 0.969}, hosts: []string{"h0", "h1", "h2", "h3"}, seeds: 20, right: 19},
		{name: "ends cached on a faster host", speeds: []float64{1, 0.93}, hosts: []string{"h1"}, cached: 12, seeds: 20, right: 19},
		{name: "a host of two slots", speeds: []float64{1, 0.94}, hosts: []string{"h0", "h1", "h1"}, seeds: 20, right: 19},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &bisecttest.History{Len: 65, CV: 0.02, Changes: drop, Hosts: tc.speeds}
			right := 0
			for seed := range tc.seeds {
				o := h.Oracle(int64(seed) + 1)
				cacheEnds(t, o, "h0", tc.cached)
				res, err := bisect.Bisect(context.Background(), h.Chain(), o, bisect.Options{Hosts: tc.hosts})
				require.NoError(t, err)
				if res.Verdict == record.OutcomeCulprit && assert.ObjectsAreEqual([]int{40}, culpritIndices(res)) {
					right++
				}
				// Every host that measured holds runs of both ends.
				for _, end := range []string{"c0000", "c0064"} {
					runs, err := o.Samples(context.Background(), end, 0)
					require.NoError(t, err)
					for _, host := range tc.hosts {
						assert.True(t, hasRunOn(runs, host), "seed %d: %s has no run on %s", seed, end, host)
					}
				}
			}
			assert.GreaterOrEqual(t, right, tc.right)
		})
	}
}

// TestHostHandlingMatters is the scenario "ends cached on a faster host"
// searched by a search that cannot tell the hosts apart (the runs' hosts
// hidden from it, as before runs carried them): it names a wrong culprit
// most of the time. The host-aware search above names the right one.
func TestHostHandlingMatters(t *testing.T) {
	h := &bisecttest.History{Len: 65, CV: 0.02, Changes: []bisecttest.Change{changeAt(40, 0.95)}, Hosts: []float64{1, 0.93}}
	wrong := 0
	for seed := range 20 {
		o := h.Oracle(int64(seed) + 1)
		cacheEnds(t, o, "h0", 12)
		res, err := bisect.Bisect(context.Background(), h.Chain(), hostBlind{o: o, host: "h1"}, bisect.Options{})
		require.NoError(t, err)
		if res.Verdict != record.OutcomeCulprit || !assert.ObjectsAreEqual([]int{40}, culpritIndices(res)) {
			wrong++
		}
	}
	t.Logf("a search blind to hosts is wrong in %d of 20", wrong)
	assert.GreaterOrEqual(t, wrong, 12, "a search blind to hosts is wrong here (14 of 20 at c50ca6b)")
}

// hostBlind measures every run on one host and hides the runs' hosts.
type hostBlind struct {
	o    *bisecttest.Oracle
	host string
}

func (b hostBlind) Samples(ctx context.Context, commit string, n int) ([]bisect.Run, error) {
	runs, err := b.o.Samples(ctx, commit, 0)
	if err != nil {
		return nil, err
	}
	if missing := n - len(runs); missing > 0 {
		runs, err = b.o.SamplesOn(ctx, commit, b.host, onHost(runs, b.host)+missing)
		if err != nil {
			return nil, err
		}
	}
	for i := range runs {
		runs[i].Host = ""
	}
	return runs, nil
}

// cacheEnds records n runs of each end of a 65-commit history on host,
// interleaved (a night's runs), before a search.
func cacheEnds(t *testing.T, o *bisecttest.Oracle, host string, n int) {
	t.Helper()
	for k := 1; k <= n; k++ {
		for _, end := range []string{"c0000", "c0064"} {
			_, err := o.SamplesOn(context.Background(), end, host, k)
			require.NoError(t, err)
		}
	}
}

func hasRunOn(runs []bisect.Run, host string) bool { return onHost(runs, host) > 0 }

func onHost(runs []bisect.Run, host string) int {
	n := 0
	for _, r := range runs {
		if r.Host == host {
			n++
		}
	}
	return n
}

// TestBisectRunsKAtOnce counts the measurements in flight: with K hosts
// named, the search's first round has one run on each of them at once.
func TestBisectRunsKAtOnce(t *testing.T) {
	h := &bisecttest.History{Len: 65, CV: 0.02, Changes: []bisecttest.Change{changeAt(40, 0.95)}, Hosts: []float64{1, 1, 1, 1}}
	g := &gatedOracle{Oracle: h.Oracle(1), k: 4, open: make(chan struct{})}
	// The deadline only keeps a serializing search from hanging the test:
	// it would wait for the fourth call forever.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := bisect.Bisect(ctx, h.Chain(), g, bisect.Options{Hosts: []string{"h0", "h1", "h2", "h3"}})
	require.NoError(t, err)
	assert.Equal(t, 4, g.most, "runs in flight at once")
	assert.Equal(t, []int{40}, culpritIndices(res))
	assert.Less(t, res.Rounds, res.Samples/2, "rounds of four runs")
}

// gatedOracle holds every call until k are in flight at once, the first
// time; from then on it lets every call through.
type gatedOracle struct {
	*bisecttest.Oracle
	k    int
	open chan struct{}

	mu             sync.Mutex
	inFlight, most int
}

func (g *gatedOracle) SamplesOn(ctx context.Context, commit, host string, n int) ([]bisect.Run, error) {
	g.mu.Lock()
	g.inFlight++
	g.most = max(g.most, g.inFlight)
	if g.inFlight == g.k {
		select {
		case <-g.open:
		default:
			close(g.open)
		}
	}
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.inFlight--
		g.mu.Unlock()
	}()
	select {
	case <-g.open:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.Oracle.SamplesOn(ctx, commit, host, n)
}

// TestBisectHostLeaves: one of three hosts leaves the pool after its first
// few runs (the oracle answers ErrHostGone for it from then on). The
// search places nothing more there, skips no commit for it, and names the
// culprit with the other hosts; when Locate confirms it, the confirmation
// moves to a host that is left. When every host leaves, the search ends
// with an infrastructure error.
func TestBisectHostLeaves(t *testing.T) {
	h := &bisecttest.History{Len: 65, CV: 0.02, Changes: []bisecttest.Change{changeAt(40, 0.95)}, Hosts: []float64{1, 0.97, 1.02}}
	t.Run("one host leaves", func(t *testing.T) {
		for seed := range 5 {
			g := &goneOracle{Oracle: h.Oracle(int64(seed) + 1), gone: map[string]int{"h0": 2}}
			res, err := bisect.Locate(context.Background(), h.Chain(), g, bisect.Options{Hosts: []string{"h0", "h1", "h2"}})
			require.NoError(t, err)
			assert.Equal(t, []int{40}, culpritIndices(res), "seed %d", seed)
			assert.Empty(t, res.Skipped, "seed %d", seed)
			assert.Equal(t, 2, g.refusedAfter["h0"], "seed %d: after it left, h0 is asked once by the search and once by the confirmation, then never", seed)
			require.NotNil(t, res.Culprits[0].Confirmation)
			assert.True(t, res.Culprits[0].Confirmation.Confirmed, "seed %d", seed)
		}
	})
	t.Run("every host leaves", func(t *testing.T) {
		g := &goneOracle{Oracle: h.Oracle(1), gone: map[string]int{"h0": 2, "h1": 3, "h2": 4, "": 0}}
		_, err := bisect.Locate(context.Background(), h.Chain(), g, bisect.Options{Hosts: []string{"h0", "h1", "h2"}})
		require.Error(t, err)
		assert.True(t, record.IsInfra(err), "%v", err)
		assert.ErrorIs(t, err, bisect.ErrHostGone)
	})
}

// goneOracle answers ErrHostGone for a host of gone once it made that
// many runs there ("" for runs placed on no host).
type goneOracle struct {
	*bisecttest.Oracle
	gone map[string]int

	mu           sync.Mutex
	made         map[string]int
	refusedAfter map[string]int
}

func (g *goneOracle) left(host string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.made == nil {
		g.made, g.refusedAfter = map[string]int{}, map[string]int{}
	}
	limit, ok := g.gone[host]
	if ok && g.made[host] >= limit {
		g.refusedAfter[host]++
		return &record.InfraError{Host: host, Op: "lease a slot", Err: bisect.ErrHostGone}
	}
	g.made[host]++
	return nil
}

func (g *goneOracle) Samples(ctx context.Context, commit string, n int) ([]bisect.Run, error) {
	if err := g.left(""); err != nil {
		return nil, err
	}
	return g.Oracle.Samples(ctx, commit, n)
}

func (g *goneOracle) SamplesOn(ctx context.Context, commit, host string, n int) ([]bisect.Run, error) {
	if err := g.left(host); err != nil {
		return nil, err
	}
	return g.Oracle.SamplesOn(ctx, commit, host, n)
}
