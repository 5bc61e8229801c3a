// Package communicator sums the partial results of tensor-parallel ranks.
//
// Every rank of a tensor-parallel group runs in its own goroutine and calls
// AllReduce with its partial sums; when the call returns, every rank holds
// the element-wise sum over all ranks. Three backends implement the
// collective, and a fallback chain picks one per call, the way SGLang picks
// between its custom allreduce, pynccl and torch.distributed:
//
//   - ring (the custom allreduce): ranks share memory and run a ring
//     reduce-scatter followed by a ring all-gather, reading their left
//     neighbour's buffer directly. Preferred when eligible.
//   - tree: a binary-tree reduce followed by a broadcast; messages cross
//     simulated peer-to-peer links.
//   - naive: gather to rank 0, sum, broadcast; messages are staged through
//     host memory, two link hops each. The last resort: always eligible.
//
// The host running the engine has no real interconnect, so a link is
// simulated by the work a real PCIe transport does per byte: the payload is
// encoded to the wire format, cut into packets, checksummed with CRC-32C and
// scrambled, and descrambled, verified and decoded on the other side.
//
// Every backend adds each element's partial sums in an order that depends
// only on the element's column, not on how many tokens the buffer holds, so
// a token's sum is the same whether it is reduced alone or in a batch.
package communicator

import (
	"fmt"
)

// Group is a tensor-parallel group of ranks that reduce together.
type Group struct {
	ranks int
	opts  Options
	ring  *ring
	tree  *tree
	naive *naive
}

// NewGroup returns a group of ranks ranks. opts.Segment is the width, in
// floats, of the column blocks the ring backend deals to the ranks; the
// ring takes only buffers whose length is a multiple of ranks×Segment.
func NewGroup(ranks int, opts Options) (*Group, error) {
	if ranks < 1 {
		return nil, fmt.Errorf("communicator: %d ranks, need at least 1", ranks)
	}
	if opts.Segment < 1 {
		return nil, fmt.Errorf("communicator: segment of %d floats, need at least 1", opts.Segment)
	}
	if opts.Backend != "" && !knownBackend(opts.Backend) {
		return nil, fmt.Errorf("communicator: unknown backend %q (want ring, tree or naive)", opts.Backend)
	}
	return &Group{
		ranks: ranks,
		opts:  opts,
		ring:  newRing(ranks, opts.Segment),
		tree:  newTree(ranks),
		naive: newNaive(ranks),
	}, nil
}

// Ranks returns the number of ranks in the group.
func (g *Group) Ranks() int { return g.ranks }

// AllReduce replaces buf, rank's partial sums, with the sum of every rank's
// buf. Every rank of the group must call it with buffers of the same length,
// and no rank may start another collective of the group before this one
// returns to it.
func (g *Group) AllReduce(rank int, buf []float32) {
	if g.ranks == 1 {
		return
	}
	switch g.Backend(len(buf)) {
	case Ring:
		g.ring.allReduce(rank, buf)
	case Tree:
		g.tree.allReduce(rank, buf)
	default:
		g.naive.allReduce(rank, buf)
	}
}

// Backend returns the backend that AllReduce uses for a buffer of n floats.
func (g *Group) Backend(n int) string {
	name, _ := g.opts.choose(g.ranks, n)
	return name
}

// Explain returns the backend used for a buffer of n floats and why the
// backends before it in the fallback chain were passed over.
func (g *Group) Explain(n int) (backend string, skipped []string) {
	return g.opts.choose(g.ranks, n)
}

func mod(a, n int) int {
	return ((a % n) + n) % n
}
