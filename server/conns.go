package server

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// The HTTP server of perfbot serve shares its process's file descriptors
// with the jobs, which fork git, builds and benchmarks. Idle clients must
// not be able to take them all: every connection has read, write and idle
// timeouts, at most ConnLimit are open at once, and a new one past the
// limit closes the connection idle longest (or, with none idle, waits in
// the kernel's backlog, where it holds no descriptor of this process).
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	// writeTimeout bounds a whole answer; the largest, a page of MaxLimit
	// history rows with fingerprints, is some megabytes.
	writeTimeout = 2 * time.Minute
	idleTimeout  = time.Minute

	// maxConns is the most connections served at once, and fdShare the
	// share of the process's descriptors they may take at most: the rest
	// is the jobs' reserve.
	maxConns = 256
	fdShare  = 4
)

// ConnLimit is the most connections the server keeps open: maxConns, or a
// fdShare-th of the process's descriptor limit when that is less.
func ConnLimit() int {
	return max(1, min(maxConns, openFileLimit()/fdShare))
}

// Listener is a net.Listener that keeps at most a limit of connections
// open; Serve serves a handler on it.
type Listener struct {
	net.Listener
	slots  chan struct{}
	closed chan struct{}
	once   sync.Once

	mu   sync.Mutex
	idle map[net.Conn]time.Time // connections with no request under way, since when
}

// Limit wraps ln to keep at most limit connections open.
func Limit(ln net.Listener, limit int) *Listener {
	return &Listener{Listener: ln, slots: make(chan struct{}, max(1, limit)), closed: make(chan struct{}), idle: map[net.Conn]time.Time{}}
}

// Close stops accepting, also a wait for a slot.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// Accept waits for a free slot, closing the connection idle longest when
// there is none, then accepts.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	default:
		l.closeIdlest()
		select {
		case l.slots <- struct{}{}:
		case <-l.closed:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &slotConn{Conn: c, free: sync.OnceFunc(func() { <-l.slots })}, nil
}

func (l *Listener) closeIdlest() {
	l.mu.Lock()
	var oldest net.Conn
	var since time.Time
	for c, t := range l.idle {
		if oldest == nil || t.Before(since) {
			oldest, since = c, t
		}
	}
	delete(l.idle, oldest)
	l.mu.Unlock()
	if oldest != nil {
		oldest.Close()
	}
}

// track follows the connections' states: one that has sent nothing yet or
// waits between requests may be closed to make room.
func (l *Listener) track(c net.Conn, s http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch s {
	case http.StateNew, http.StateIdle:
		l.idle[c] = time.Now()
	default:
		delete(l.idle, c)
	}
}

// Server returns an http.Server for h with the timeouts above, which
// tells l the states of its connections; serve it on l.
func (l *Listener) Server(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		ConnState:         l.track,
	}
}

// slotConn gives its slot back when closed, once.
type slotConn struct {
	net.Conn
	free func()
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.free()
	return err
}
