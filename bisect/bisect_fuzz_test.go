package bisect_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/bisect/bisecttest"
	"github.com/perfbot/perfbot/record"
)

// maxOracleCalls bounds the calls one search may make of a scriptOracle.
// The fuzzed budgets allow a few thousand (Locate: three searches of at
// most 13 Scan stretches of 120 runs, and the confirmations); a search
// that gets this far is not stopping.
const maxOracleCalls = 20000

// errTooManyCalls is what a scriptOracle answers past maxOracleCalls.
var errTooManyCalls = errors.New("fuzz oracle: too many calls")

// scriptOracle is a bisect.Oracle whose answers a fuzzer writes: whether a
// commit builds, each run's value, the host's speed at each run and each
// run's place in time come from four scripts of bytes, so that every value
// (infinite, NaN, zero, negative, all equal), a host that jumps between
// speeds, every order of runs in time and every status (broken, broken
// later, unreachable, a short answer) can be reached. With ordered off it
// answers the same whatever the order of the calls (several probes at
// once).
type scriptOracle struct {
	status, values, host, times []byte
	index                       map[string]int
	// level is the true value of each commit: one change along the chain.
	level []float64
	// ordered stamps the runs from one clock in the order they are made,
	// and takes the host's speed from that clock; otherwise run k of
	// commit i is at k·len(chain)+i+1.
	ordered bool

	mu    sync.Mutex
	runs  map[int][]bisect.Run
	clock uint64
	calls int
}

var _ bisect.Oracle = (*scriptOracle)(nil)

// newScriptOracle returns an oracle over chain whose commits from at on
// are factor times slower or faster.
func newScriptOracle(chain []string, at int, factor float64, ordered bool, status, values, host, times []byte) *scriptOracle {
	o := &scriptOracle{status: status, values: values, host: host, times: times, ordered: ordered,
		index: map[string]int{}, level: make([]float64, len(chain)), runs: map[int][]bisect.Run{}}
	for i, c := range chain {
		o.index[c] = i
		o.level[i] = 100
		if i >= at {
			o.level[i] *= factor
		}
	}
	return o
}

// cyclic returns byte k of script, cyclically, and false for an empty
// script.
func cyclic(script []byte, k int) (byte, bool) {
	if len(script) == 0 {
		return 0, false
	}
	return script[k%len(script)], true
}

func (o *scriptOracle) Samples(ctx context.Context, commit string, n int) ([]bisect.Run, error) {
	i, ok := o.index[commit]
	if !ok {
		return nil, fmt.Errorf("fuzz oracle: unknown commit %q", commit)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.calls++; o.calls > maxOracleCalls {
		return nil, errTooManyCalls
	}
	have := o.runs[i]
	if len(have) >= n {
		return slices.Clone(have), nil
	}
	short := false
	if s, ok := cyclic(o.status, i); ok {
		switch s % 32 {
		case 0:
			return nil, fmt.Errorf("build %s: %w", commit, record.ErrBroken)
		case 1:
			if len(have) >= 2 {
				return nil, fmt.Errorf("build %s again: %w", commit, record.ErrBroken)
			}
		case 2:
			return nil, errors.New("fuzz oracle: host unreachable")
		case 3:
			short = true
		}
	}
	for len(have) < n {
		have = append(have, o.run(i, len(have), have))
	}
	o.runs[i] = have
	if short {
		return slices.Clone(have[:n-1]), nil
	}
	return slices.Clone(have), nil
}

// run makes run k of commit i.
func (o *scriptOracle) run(i, k int, have []bisect.Run) bisect.Run {
	var r bisect.Run
	v, _ := cyclic(o.values, 13*i+k)
	switch v % 32 {
	case 0:
		r.Value = math.Inf(1)
	case 1:
		r.Value = math.Inf(-1)
	case 2:
		r.Value = math.NaN()
	case 3:
		r.Value = 0
	case 4:
		r.Value = -o.level[i]
	case 5:
		r.Value = math.MaxFloat64
	case 6:
		r.Value = math.SmallestNonzeroFloat64
	case 7:
		r.Value = 100
	default:
		r.Value = o.level[i] * (1 + (float64(v)-128)/2000) * o.speed(i, k)
	}
	tb, ok := cyclic(o.times, 7*i+k)
	if !ok {
		tb = 4 // the clock
	}
	switch tb % 16 {
	case 0:
		r.Seq = 0
	case 1:
		if len(have) > 0 {
			r.Seq = have[len(have)-1].Seq
		}
	case 2:
		r.Seq = o.clock / 2
	case 3:
		r.Seq = math.MaxUint64 - uint64(k)
	default:
		if o.ordered {
			o.clock++
			r.Seq = o.clock
		} else {
			r.Seq = uint64(k*len(o.level) + i + 1)
		}
	}
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	switch tb >> 4 % 4 {
	case 1:
		r.At = base.Add(time.Duration(r.Seq) * time.Minute)
	case 2:
		r.At = base.Add(time.Duration(k) * 24 * time.Hour)
	case 3:
		r.At = base.Add(-time.Duration(k) * time.Hour)
	}
	return r
}

// speed returns the host's speed at run k of commit i: 1, or 705/1017 as
// in issue 19, or 1.2.
func (o *scriptOracle) speed(i, k int) float64 {
	t := k*len(o.level) + i
	if o.ordered {
		t = int(o.clock)
	}
	h, _ := cyclic(o.host, t)
	return []float64{1, 705.0 / 1017, 1, 1.2}[h%4]
}

// fuzzOptions spreads the bits of a fuzzed word over the options, with a
// budget small enough for a fuzzer and large enough to reach the end of a
// search.
func fuzzOptions(bits uint32) bisect.Options {
	o := bisect.Options{
		Parallel:     1 + int(bits%4),
		InitialRuns:  []int{2, 3, 4, 5, 6, 8, 12, 16}[bits>>2%8],
		MaxRuns:      []int{1, 2, 5, 12, 30, 60, 120, 120}[bits>>5%8],
		Direction:    []record.Direction{"", record.Regression, record.Improvement, record.Any}[bits>>8%4],
		Confidence:   []float64{0, 0.51, 0.9, 0.999}[bits>>10%4],
		MinEffect:    []float64{0, 0, 0.001, 0.3}[bits>>12%4],
		Scan:         []int{0, 0, 4, 7}[bits>>14%4],
		Attempts:     1 + int(bits>>16%3),
		ConfirmPairs: []int{0, 1, 4, 12}[bits>>18%4],
		SameTail:     []float64{0, 0, 0.5, 1e-6}[bits>>20%4],
	}
	if bits>>22%2 == 1 {
		o.Better = record.Lower
	}
	return o
}

// FuzzBisect drives Bisect and Locate (Scan, when the options ask for it)
// over a scriptOracle and asserts only that they return, with a result or
// an error, within a bounded number of oracle calls: no panic and no
// endless search, whatever the runs hold. size sets the chain's length,
// bits the options, the change (bits 23–31) and how runs are stamped in
// time; status, values, host and times are the oracle's scripts. The seeds in
// testdata/fuzz/FuzzBisect name what they hold.
func FuzzBisect(f *testing.F) {
	f.Fuzz(func(t *testing.T, size uint8, bits uint32, status, values, host, times []byte) {
		chain := (&bisecttest.History{Len: 2 + int(size)%47}).Chain()
		opts := fuzzOptions(bits)
		change := 1 + int(bits>>24)%(len(chain)-1)
		factor := []float64{0.95, 1.05}[bits>>23%2]
		ordered := opts.Parallel == 1 && bits>>31 == 0
		searches := []struct {
			name   string
			search func(context.Context, []string, bisect.Oracle, bisect.Options) (*bisect.Result, error)
		}{
			{"Bisect", bisect.Bisect},
			{"Locate", bisect.Locate},
		}
		for _, s := range searches {
			o := newScriptOracle(chain, change, factor, ordered, status, values, host, times)
			res, err := s.search(context.Background(), chain, o, opts)
			if o.calls > maxOracleCalls {
				t.Fatalf("%s does not stop: more than %d oracle calls", s.name, maxOracleCalls)
			}
			if err == nil && res == nil {
				t.Fatalf("%s returned neither a result nor an error", s.name)
			}
		}
	})
}
