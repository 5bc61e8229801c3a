package service

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/runnertest"
	"github.com/perfbot/perfbot/store"
)

// clusterHost is a Slurm host of fake nodes: its benchmark steps run on
// its nodes in turn (Result.Node), each at the node's speed. hideNodes
// makes it report no node, as the bisection saw a cluster before the
// store's runs carried their nodes to it.
type clusterHost struct {
	*runnertest.Fake
	nodes     []string
	speed     map[string]float64
	hideNodes bool

	mu sync.Mutex
	n  int
}

var tokS = regexp.MustCompile(`([0-9.]+) tok/s`)

func (h *clusterHost) Exec(ctx context.Context, slot int, cmd runner.Command) (runner.Result, error) {
	res, err := h.Fake.Exec(ctx, slot, cmd)
	if err != nil || cmd.Env[runner.EnvPhase] != runner.PhaseBench {
		return res, err
	}
	h.mu.Lock()
	node := h.nodes[h.n%len(h.nodes)]
	h.n++
	h.mu.Unlock()
	res.Output = tokS.ReplaceAllFunc(res.Output, func(m []byte) []byte {
		v, _ := strconv.ParseFloat(string(tokS.FindSubmatch(m)[1]), 64)
		return []byte(fmt.Sprintf("%.3f tok/s", v*h.speed[node]))
	})
	if !h.hideNodes {
		res.Node = node
	}
	return res, nil
}

// TestBisectSlurmNodesOfDifferentSpeeds: a cluster whose second node runs
// 12% slower than its first, more than twice the 5% drop searched for,
// and whose benchmark steps land on the two in turn. The runs carry their
// node from the store to the search, which fits the nodes' offsets apart
// and names the culprit; without their nodes it needs more runs (twice as
// many at seed 1) for the spread the two speeds add.
func TestBisectSlurmNodesOfDifferentSpeeds(t *testing.T) {
	const n = 24
	bisectOn := func(t *testing.T, hide bool) (*bisect.Result, []bisect.Run, *store.DB, error) {
		h := &clusterHost{Fake: chainHost("cluster", n, stepAt(15, 0.05), 1, 1),
			nodes: []string{"node1", "node2"}, speed: map[string]float64{"node1": 1, "node2": 0.88}, hideNodes: hide}
		o, db := newTestOracle(t, oracleSpec, h)
		co := commitOracle{o: o, metric: "verify_tok_s"}
		res, err := bisect.Locate(context.Background(), chainOf(n), co, bisect.Options{Hosts: o.Hosts()})
		entry, rerr := o.store.Cached(o.spec, record.Target{Commit: chainCommit(0)}.Key())
		require.NoError(t, rerr)
		ends, rerr := co.runs(entry)
		require.NoError(t, rerr)
		return res, ends, db, err
	}

	res, ends, db, err := bisectOn(t, false)
	require.NoError(t, err)
	require.Equal(t, []string{chainCommit(15)}, culprits(res), "warnings %v", record.WarningStrings(res.Warnings))
	require.NotNil(t, res.Culprits[0].Confirmation)
	assert.True(t, res.Culprits[0].Confirmation.Confirmed, res.Culprits[0].Confirmation.String())
	assert.InDelta(t, -5, res.Culprits[0].Effect.Pct, 1.5, "the effect is measured apart from the nodes' speeds")
	nodes := map[string]int{}
	for _, r := range ends {
		assert.Equal(t, "cluster", r.Host)
		nodes[r.Node]++
	}
	assert.Len(t, nodes, 2, "the search is told which node ran each run of the good end: %v", nodes)
	stored, err := db.Runs(store.RunFilter{})
	require.NoError(t, err)
	for _, r := range stored {
		assert.Contains(t, []string{"node1", "node2"}, r.Node, "run %d records its node", r.ID)
	}

	blind, _, _, err := bisectOn(t, true)
	require.NoError(t, err)
	t.Logf("with nodes: %s in %d samples; without: %v in %d samples", culprits(res), res.Samples, culprits(blind), blind.Samples)
	assert.Greater(t, blind.Samples, res.Samples, "without their nodes the same runs cost the search more samples")
}
