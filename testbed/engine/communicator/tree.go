package communicator

// tree reduces up a binary tree over the ranks and broadcasts the sum back
// down. At stride s = 1, 2, 4, … rank r with r mod 2s = s sends its partial
// sum to rank r-s, so an element's additions always run in the same order:
// ((x0+x1)+(x2+x3))+…, whatever the buffer's length.
type tree struct {
	ranks int
	up    []*link // up[r]: r → its parent
	down  []*link // down[r]: parent → r
}

func newTree(ranks int) *tree {
	t := &tree{ranks: ranks, up: make([]*link, ranks), down: make([]*link, ranks)}
	for r := 1; r < ranks; r++ {
		t.up[r], t.down[r] = newLink(), newLink()
	}
	return t
}

func (t *tree) allReduce(rank int, buf []float32) {
	// Reduce: receive from children at increasing strides, then send up.
	s := 1
	for ; s < t.ranks; s *= 2 {
		if rank%(2*s) != 0 {
			t.up[rank].send(buf, false, nil)
			break
		}
		if child := rank + s; child < t.ranks {
			t.up[child].recv(buf, true)
		}
	}
	// Broadcast: receive the sum from the parent, then pass it to the
	// children in the reverse order.
	if rank != 0 {
		t.down[rank].recv(buf, false)
	}
	for s /= 2; s >= 1; s /= 2 {
		if child := rank + s; child < t.ranks {
			t.down[child].send(buf, false, nil)
		}
	}
}
