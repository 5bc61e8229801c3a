package proc

import "fmt"

// Capture keeps the head and tail of what is written to it, within a
// limit: the head says what ran, the tail how it ended and, for most
// benchmarks, the results. It is not safe for concurrent use.
type Capture struct {
	head  []byte // the first half of the limit
	tail  []byte // a ring of the rest
	next  int    // where the ring is written next
	full  bool   // the ring has wrapped
	total int64
}

// NewCapture returns a Capture that keeps limit bytes.
func NewCapture(limit int) *Capture {
	half := limit / 2
	return &Capture{head: make([]byte, 0, half), tail: make([]byte, limit-half)}
}

func (c *Capture) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	if room := cap(c.head) - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if len(c.tail) == 0 {
		return n, nil
	}
	if len(p) >= len(c.tail) {
		copy(c.tail, p[len(p)-len(c.tail):])
		c.next, c.full = 0, true
		return n, nil
	}
	k := copy(c.tail[c.next:], p)
	if k < len(p) {
		copy(c.tail, p[k:])
		c.full = true
	}
	c.next = (c.next + len(p)) % len(c.tail)
	if c.next == 0 && len(p) > 0 {
		c.full = true
	}
	return n, nil
}

// Bytes returns what was kept, with a line that says how much of the
// middle was omitted, and whether anything was.
func (c *Capture) Bytes() ([]byte, bool) {
	var tail []byte
	if c.full {
		tail = append(append(tail, c.tail[c.next:]...), c.tail[:c.next]...)
	} else {
		tail = c.tail[:c.next]
	}
	omitted := c.total - int64(len(c.head)) - int64(len(tail))
	out := append([]byte(nil), c.head...)
	if omitted > 0 {
		out = append(out, fmt.Sprintf("\n[perfbot: %d bytes of output omitted]\n", omitted)...)
	}
	return append(out, tail...), omitted > 0
}
