package communicator

import "sync"

// ring is the custom allreduce: the ranks' buffers live in shared memory,
// and a ring reduce-scatter followed by a ring all-gather runs over them in
// place, each rank reading its left neighbour's buffer directly.
//
// On the GPUs of a real node every rank runs its part of a step at the same
// time. Here the ranks share one core, so the last rank to arrive runs every
// rank's part of each step, step by step, while the others wait: the same
// reads, additions and copies in the same order, without 2R(R-1) goroutine
// hand-offs that would make the simulated custom allreduce slower than a
// real one.
//
// The buffer is cut into segments of seg floats dealt round-robin to R
// chunks: chunk c holds segments c, c+R, c+2R, …. With seg = hidden/R a
// chunk is the same set of columns in every token, which keeps each
// element's order of additions independent of the number of tokens.
type ring struct {
	ranks int
	seg   int

	mu      sync.Mutex
	arrived int
	bufs    [][]float32
	// release is closed when the call the waiting ranks joined is done.
	release chan struct{}
}

func newRing(ranks, seg int) *ring {
	return &ring{ranks: ranks, seg: seg, bufs: make([][]float32, ranks), release: make(chan struct{})}
}

func (r *ring) allReduce(rank int, buf []float32) {
	r.mu.Lock()
	r.bufs[rank] = buf
	r.arrived++
	if r.arrived < r.ranks {
		release := r.release
		r.mu.Unlock()
		<-release
		return
	}
	r.arrived = 0
	release := r.release
	r.release = make(chan struct{})
	r.mu.Unlock()
	r.run(len(buf))
	close(release)
}

// run performs both phases over all buffers.
func (r *ring) run(n int) {
	// Reduce-scatter: at step s, rank q adds its left neighbour's chunk
	// q-s-1 into its own; after R-1 steps rank q holds the full sum of
	// chunk q+1. Within a step no rank writes a chunk that another reads,
	// so the order in which the ranks take their turn does not matter.
	for s := range r.ranks - 1 {
		for q := range r.ranks {
			dst, src := r.bufs[q], r.bufs[mod(q-1, r.ranks)]
			r.eachSegment(mod(q-s-1, r.ranks), n, func(lo, hi int) {
				d, x := dst[lo:hi], src[lo:hi]
				for i := range d {
					d[i] += x[i]
				}
			})
		}
	}
	// All-gather: at step s, rank q copies chunk q-s, finished, from its
	// left neighbour.
	for s := range r.ranks - 1 {
		for q := range r.ranks {
			dst, src := r.bufs[q], r.bufs[mod(q-1, r.ranks)]
			r.eachSegment(mod(q-s, r.ranks), n, func(lo, hi int) {
				copy(dst[lo:hi], src[lo:hi])
			})
		}
	}
	clear(r.bufs)
}

// eachSegment calls f with the bounds of every segment of chunk c in a
// buffer of n floats.
func (r *ring) eachSegment(c, n int, f func(lo, hi int)) {
	stride := r.seg * r.ranks
	for lo := c * r.seg; lo < n; lo += stride {
		f(lo, lo+r.seg)
	}
}
