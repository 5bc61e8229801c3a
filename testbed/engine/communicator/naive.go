package communicator

// naive gathers every partial sum on rank 0, adds them in rank order and
// sends the sum back to every rank. Its messages are staged through host
// memory, two hops each, and rank 0 handles all of them: the last resort.
type naive struct {
	ranks  int
	up     []*link // up[r]: r → 0
	down   []*link // down[r]: 0 → r
	bounce [][]byte
}

func newNaive(ranks int) *naive {
	n := &naive{ranks: ranks, up: make([]*link, ranks), down: make([]*link, ranks), bounce: make([][]byte, ranks)}
	for r := range ranks {
		if r > 0 {
			n.up[r], n.down[r] = newLink(), newLink()
		}
		n.bounce[r] = make([]byte, 4+4*packetFloats)
	}
	return n
}

func (n *naive) allReduce(rank int, buf []float32) {
	if rank != 0 {
		n.up[rank].send(buf, true, n.bounce[rank])
		n.down[rank].recv(buf, false)
		return
	}
	for r := 1; r < n.ranks; r++ {
		n.up[r].recv(buf, true)
	}
	for r := 1; r < n.ranks; r++ {
		n.down[r].send(buf, true, n.bounce[0])
	}
}
