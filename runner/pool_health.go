package runner

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/perfbot/perfbot/record"
)

// A host that keeps failing leaves the pool. Only failures of the host
// itself count: a host that could not be reached, refused perfbot's key or
// dropped the connection (errors wrapping ErrHostDown, each already
// retried with backoff by the host). Other infrastructure failures (a
// checkout git refused, a Slurm job preempted) belong to one target as
// often as to the host, and the searches judge those per target; a host
// that fails them goes on getting leases.
//
// After Policy.MaxFailures such failures in a row (a lease on which the
// host worked ends the row) the host is out: it gets no lease, and a
// caller that names it (AcquireOn) gets a *record.InfraError wrapping
// ErrOutOfPool at once, so that a search moves its runs to the other
// hosts. When every host is out, Acquire fails with one naming every host
// and why. An out host is tried again with one lease after
// Policy.Cooldown (a rebooted machine comes back), or at once after
// Retry (the next job): a failure puts it out again, a lease on which it
// worked brings it back.

// ErrHostDown is wrapped by the errors of a host that could not be
// reached, refused perfbot's key or dropped its connection: the failures
// a Pool counts against the host. HostDown marks an error so.
var ErrHostDown = errors.New("the host is down")

// ErrOutOfPool is wrapped by the error a Pool gives for a host that left
// it (and for an Acquire when every host did).
var ErrOutOfPool = errors.New("the host left the pool")

// HostDown marks err, a host's failure to be reached or to keep its
// connection, as wrapping ErrHostDown; its message stays err's.
func HostDown(err error) error {
	if err == nil {
		return nil
	}
	return &hostDownError{err}
}

type hostDownError struct{ err error }

func (e *hostDownError) Error() string        { return e.err.Error() }
func (e *hostDownError) Unwrap() error        { return e.err }
func (e *hostDownError) Is(target error) bool { return target == ErrHostDown }

// Policy is how a Pool treats a host that keeps failing. The zero value
// asks for the defaults.
type Policy struct {
	// MaxFailures is the number of host failures in a row after which the
	// host leaves the pool: DefaultMaxFailures when zero.
	MaxFailures int
	// Cooldown is how long a host stays out before a lease tries it
	// again: DefaultCooldown when zero.
	Cooldown time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Defaults of Policy.
const (
	DefaultMaxFailures = 3
	DefaultCooldown    = 10 * time.Minute
)

// HostState is what the pool knows of one host's health.
type HostState struct {
	Name string `json:"name"`
	// Failures counts the host failures in a row since the host last
	// worked.
	Failures int `json:"failures"`
	// Out is set while the host is out of the pool; Left is when it
	// left, Retry when a lease may try it again.
	Out   bool      `json:"out"`
	Left  time.Time `json:"left,omitzero"`
	Retry time.Time `json:"retry,omitzero"`
	// Error is the host's last failure, "" once it worked.
	Error string `json:"error,omitempty"`
}

// String says where the host stands, in one line.
func (s HostState) String() string {
	switch {
	case s.Out:
		return fmt.Sprintf("host %s left the pool at %s after %d failures in a row (%s); a lease tries it again from %s",
			s.Name, s.Left.Format(time.TimeOnly), s.Failures, s.Error, s.Retry.Format(time.TimeOnly))
	case s.Failures > 0:
		return fmt.Sprintf("host %s is in the pool, %d failures in a row (%s)", s.Name, s.Failures, s.Error)
	}
	return fmt.Sprintf("host %s is in the pool", s.Name)
}

// health is a poolHost's record of its failures.
type health struct {
	failures int
	out      bool
	left     time.Time
	retry    time.Time
	last     error
	trial    bool // the host's one lease while it is out is under way
}

// SetPolicy sets how the pool treats failing hosts; call it before the
// first lease.
func (p *Pool) SetPolicy(pol Policy) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pol.MaxFailures <= 0 {
		pol.MaxFailures = DefaultMaxFailures
	}
	if pol.Cooldown <= 0 {
		pol.Cooldown = DefaultCooldown
	}
	if pol.Now == nil {
		pol.Now = time.Now
	}
	p.policy = pol
}

// Watch calls fn with a host's state whenever it leaves the pool or comes
// back, outside the pool's lock. stop ends the calls.
func (p *Pool) Watch(fn func(HostState)) (stop func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watchN++
	id := p.watchN
	if p.watchers == nil {
		p.watchers = map[int]func(HostState){}
	}
	p.watchers[id] = fn
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		delete(p.watchers, id)
	}
}

// States returns the health of every host, in the order they were given.
func (p *Pool) States() []HostState {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]HostState, len(p.hosts))
	for i, h := range p.hosts {
		out[i] = h.state()
	}
	return out
}

// Retry makes every host that is out due for a lease that tries it now:
// a new job gives the machines that failed the last one another chance.
func (p *Pool) Retry() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.policy.Now()
	for _, h := range p.hosts {
		if h.health.out && h.health.retry.After(now) {
			h.health.retry = now
		}
	}
	p.wakeLocked()
}

// HasOther reports whether a host other than the named one is in the
// pool: whether a measurement that failed there can go on elsewhere.
func (p *Pool) HasOther(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, h := range p.hosts {
		if h.host.Name() != name && !h.health.out {
			return true
		}
	}
	return false
}

func (h *poolHost) state() HostState {
	s := HostState{Name: h.host.Name(), Failures: h.health.failures, Out: h.health.out,
		Left: h.health.left, Retry: h.health.retry}
	if h.health.last != nil {
		s.Error = hostError(h.host.Name(), h.health.last)
	}
	return s
}

// hostError is err's text without the "host NAME: " its own
// *record.InfraError puts first: a state names its host already.
func hostError(name string, err error) string {
	return strings.TrimPrefix(err.Error(), "host "+name+": ")
}

// usable reports whether h may get a lease now: it is in, or out and due
// for its trial with none under way. The caller holds p.mu.
func (p *Pool) usable(h *poolHost) bool {
	if !h.health.out {
		return true
	}
	return !h.health.trial && !p.policy.Now().Before(h.health.retry)
}

// unavailable returns why no lease of hosts can be waited for: every one
// of them is out, none due and none on trial. It returns nil when a
// lease may yet come. The caller holds p.mu.
func (p *Pool) unavailable(hosts []*poolHost) error {
	now := p.policy.Now()
	var why []string
	for _, h := range hosts {
		if !h.health.out || h.health.trial || !now.Before(h.health.retry) {
			return nil
		}
		why = append(why, h.state().String())
	}
	if len(hosts) == 1 {
		return &record.InfraError{Host: hosts[0].host.Name(), Op: "lease a slot",
			Err: fmt.Errorf("%w %s", ErrOutOfPool, strings.TrimPrefix(why[0], "host "+hosts[0].host.Name()+" left the pool "))}
	}
	return &record.InfraError{Op: "lease a slot",
		Err: fmt.Errorf("no host is left in the pool (%w): %s", ErrOutOfPool, strings.Join(why, "; "))}
}

// leased notes that h got a lease: its trial while it is out. The caller
// holds p.mu.
func (h *poolHost) leased() {
	if h.health.out {
		h.health.trial = true
	}
}

// reportHost records how a lease of h ended: failed with err (nil when
// the host worked), trial when it was the host's one lease while out. A
// failure that is not the host's (not ErrHostDown) changes nothing. The
// watchers hear of a host that left or came back.
func (p *Pool) reportHost(h *poolHost, err error, trial bool) {
	p.mu.Lock()
	if trial {
		h.health.trial = false
	}
	changed := false
	switch {
	case err == nil:
		changed = h.health.out
		h.health = health{trial: h.health.trial}
	case errors.Is(err, ErrHostDown):
		h.health.failures++
		h.health.last = err
		if h.health.failures >= p.policy.MaxFailures {
			now := p.policy.Now()
			if !h.health.out {
				h.health.out, h.health.left, changed = true, now, true
			}
			h.health.retry = now.Add(p.policy.Cooldown)
		}
	}
	state := h.state()
	var watchers []func(HostState)
	if changed {
		for _, fn := range p.watchers {
			watchers = append(watchers, fn)
		}
	}
	p.wakeLocked()
	p.mu.Unlock()
	for _, fn := range watchers {
		fn(state)
	}
}
