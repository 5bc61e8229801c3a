package bisecttest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/record"
)

// ErrInfra is the failure an Oracle reports for a commit listed in
// History.InfraAt: the host went away, not the commit.
var ErrInfra = errors.New("bisecttest: host unreachable")

// Change multiplies the level of every commit from At on by Factor
// (0.95 for a 5% drop of a higher-is-better metric).
type Change struct {
	At     int
	Factor float64
}

// Range is an inclusive range of chain indices.
type Range struct{ From, To int }

// History is a fake first-parent chain. Commit i has the identifier
// CommitID(i); commit 0 is the good end and commit Len−1 the bad end.
type History struct {
	// Len is the number of commits on the chain, both ends included.
	Len int
	// Base is the level of commit 0; 0 means 100.
	Base float64
	// CV is the coefficient of variation of one run (0.02 = 2%).
	CV float64
	// Changes are the steps of the level along the chain.
	Changes []Change
	// Broken lists the commits that do not build.
	Broken []Range
	// InfraAt lists the commits whose measurement always fails with a
	// *record.InfraError wrapping ErrInfra.
	InfraAt []int
	// FlakyInfra lists commits whose measurement fails on the
	// infrastructure now and then.
	FlakyInfra []FlakyInfra
	// Hosts are the speed factors of the hosts HostName(0), HostName(1),
	// … that SamplesOn measures on ({1, 0.97, 1.02, 0.99}: the second
	// host 3% slower); a run of Samples, placed nowhere, runs at the
	// usual speed on host "".
	Hosts []float64
	// OutlierRate is the fraction of runs that are disturbed, and
	// OutlierShift how far such a run is moved, in standard deviations
	// of the log value (−5: five σ lower, a slow run of a throughput).
	OutlierRate  float64
	OutlierShift float64
	// DriftSD and DriftCorr make the host's speed wander over time: the
	// log value of every run is moved by an AR(1) process over the
	// oracle's runs in the order they are made, with stationary standard
	// deviation DriftSD (0.04 = 4%) and correlation DriftCorr from one run
	// to the next, as a shared machine's neighbours come and go.
	DriftSD   float64
	DriftCorr float64
	// HostLevels and HostEvery make the host's speed jump between levels
	// instead: the runs, in the order they are made, come in blocks of
	// HostEvery, and block k runs at HostLevels[k mod len(HostLevels)]
	// times the usual speed ({1, 705.0 / 1017}: a neighbour's job that
	// takes the machine for a few runs at a time and leaves it again).
	HostLevels []float64
	HostEvery  int
	// Transient lists commits whose first runs read differently from the
	// rest (a cold cache after the build, a warm-up the benchmark does not
	// discard): what the commit's first runs show, later runs do not.
	Transient []Transient
	// Cached lists runs the oracle holds before the search starts, taken
	// at another time (an earlier stretch, an earlier night): one after
	// another, with no run of another commit between them, long before
	// the search's own runs.
	Cached []Cached
	// Trees is the number of built trees a host keeps, as a pool slot
	// keeps runner.DefaultTrees: a commit measured again after Trees
	// others were built since is built again (Oracle.TreeBuilds counts
	// those builds too). 0 keeps every build.
	Trees int
}

// FlakyInfra makes Fail of every Of tries at measuring commit At fail on
// the infrastructure (the first Fail of each Of); a try is one call that
// has runs to make.
type FlakyInfra struct {
	At, Fail, Of int
}

// HostName returns the name of host j of History.Hosts: "h0", "h1", ….
func HostName(j int) string { return fmt.Sprintf("h%d", j) }

// Cached is a block of recorded runs of commit At: Runs runs taken in a
// row while the host ran at Host times its usual speed (0.72: the host was
// 28% slower then; 0 means 1).
type Cached struct {
	At, Runs int
	Host     float64
}

// Transient multiplies the first Runs fresh runs of commit At by Factor.
type Transient struct {
	At, Runs int
	Factor   float64
}

// cacheGap is the distance in time (Seq) between the cached runs and the
// first run of a search: other work ran in between.
const cacheGap = 1000

// CommitID returns the identifier of commit i: "c0007".
func CommitID(i int) string { return fmt.Sprintf("c%04d", i) }

// Chain returns the identifiers of the commits, oldest first.
func (h *History) Chain() []string {
	out := make([]string, h.Len)
	for i := range out {
		out[i] = CommitID(i)
	}
	return out
}

// Level returns the true median value of commit i.
func (h *History) Level(i int) float64 {
	l := h.Base
	if l == 0 {
		l = 100
	}
	for _, c := range h.Changes {
		if i >= c.At {
			l *= c.Factor
		}
	}
	return l
}

// Culprits returns the indices of the commits that change the level, in
// chain order.
func (h *History) Culprits() []int {
	var out []int
	for _, c := range h.Changes {
		if c.Factor != 1 && !slices.Contains(out, c.At) {
			out = append(out, c.At)
		}
	}
	slices.Sort(out)
	return out
}

// IsBroken reports whether commit i does not build.
func (h *History) IsBroken(i int) bool {
	for _, r := range h.Broken {
		if i >= r.From && i <= r.To {
			return true
		}
	}
	return false
}

// Oracle returns a fresh oracle over the history; the seed fixes every
// value it will ever return. The Cached runs are recorded in it already.
func (h *History) Oracle(seed int64) *Oracle {
	o := &Oracle{
		h:       h,
		seed:    uint64(seed),
		sigma:   math.Sqrt(math.Log1p(h.CV * h.CV)),
		values:  make(map[int][]bisect.Run),
		streams: make(map[uint64]*rand.Rand),
		built:   make(map[built]bool),
		tries:   make(map[int]int),
		fresh:   make(map[int]int),
		host:    rand.New(rand.NewPCG(uint64(seed), 1<<40)),
	}
	for _, c := range h.Cached {
		r := rand.New(rand.NewPCG(uint64(seed), uint64(c.At)|1<<50))
		host := c.Host
		if host == 0 {
			host = 1
		}
		for range c.Runs {
			o.seq++
			v := h.Level(c.At) * host * math.Exp(o.sigma*r.NormFloat64())
			o.values[c.At] = append(o.values[c.At], bisect.Run{Value: v, Seq: o.seq})
		}
	}
	if len(h.Cached) > 0 {
		o.seq += cacheGap
	}
	return o
}

// Oracle is a seeded, noisy bisect.Oracle over a History. It records what
// it measured, as the real measurement cache does, and is safe for
// concurrent use.
type Oracle struct {
	h     *History
	seed  uint64
	sigma float64

	mu      sync.Mutex
	values  map[int][]bisect.Run
	streams map[uint64]*rand.Rand
	built   map[built]bool   // the commits built, on each host
	trees   map[string][]int // per host, the commits whose trees are kept, latest last
	rebuilt int              // builds of a commit whose tree had been given up
	tries   map[int]int      // calls that had runs to make, per commit
	fresh   map[int]int      // runs made of each commit
	runs    int
	seq     uint64     // the oracle's clock: the Seq of the latest run
	drift   float64    // current log drift of the host
	host    *rand.Rand // stream of the drift
}

// built is a commit built on a host.
type built struct {
	i    int
	host string
}

var _ bisect.HostOracle = (*Oracle)(nil)

// Samples implements bisect.Oracle. Every run it makes gets the next Seq
// of the oracle's clock; it runs on host "" at the usual speed.
func (o *Oracle) Samples(ctx context.Context, commit string, n int) ([]bisect.Run, error) {
	return o.samples(ctx, commit, "", 1, n)
}

// SamplesOn implements bisect.HostOracle: the fresh runs are made on
// host, at its speed (History.Hosts), until it holds n runs of the
// commit.
func (o *Oracle) SamplesOn(ctx context.Context, commit, host string, n int) ([]bisect.Run, error) {
	speed := 0.0
	for j, f := range o.h.Hosts {
		if HostName(j) == host {
			speed = f
		}
	}
	if speed == 0 {
		return nil, fmt.Errorf("bisecttest: unknown host %q", host)
	}
	return o.samples(ctx, commit, host, speed, n)
}

// samples measures commit on host, at speed, until host holds n runs of
// it.
func (o *Oracle) samples(ctx context.Context, commit, host string, speed float64, n int) ([]bisect.Run, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	i, err := o.index(commit)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	have := o.values[i]
	on := 0
	for _, r := range have {
		if r.Host == host {
			on++
		}
	}
	if on >= n {
		return slices.Clone(have), nil
	}
	try := o.tries[i]
	o.tries[i]++
	if o.infraFails(i, try) {
		return nil, &record.InfraError{Host: host, Op: "measure " + commit, Err: ErrInfra}
	}
	o.keepTree(i, host, o.built[built{i, host}])
	o.built[built{i, host}] = true
	if o.h.IsBroken(i) {
		return nil, fmt.Errorf("build %s: %w", commit, record.ErrBroken)
	}
	r := o.stream(i, host)
	level := math.Log(o.h.Level(i))
	fresh := o.fresh[i]
	for ; on < n; on++ {
		z := r.NormFloat64()
		if o.h.OutlierRate > 0 && r.Float64() < o.h.OutlierRate {
			z += o.h.OutlierShift
		}
		o.seq++
		v := math.Exp(level+o.sigma*z+o.nextDrift()) * o.hostLevel() * speed
		for _, t := range o.h.Transient {
			if t.At == i && fresh < t.Runs {
				v *= t.Factor
			}
		}
		fresh++
		have = append(have, bisect.Run{Value: v, Seq: o.seq, Host: host})
		o.runs++
	}
	o.values[i] = have
	o.fresh[i] = fresh
	return slices.Clone(have), nil
}

// stream returns the random stream of commit i on host: one per commit
// and host, so that the values of the runs a host makes of a commit do
// not depend on the order in which concurrent probes reach the oracle.
func (o *Oracle) stream(i int, host string) *rand.Rand {
	key := uint64(i)
	for j := range o.h.Hosts {
		if HostName(j) == host {
			key |= uint64(j+1) << 32
		}
	}
	r := o.streams[key]
	if r == nil {
		r = rand.New(rand.NewPCG(o.seed, key))
		o.streams[key] = r
	}
	return r
}

// infraFails reports whether try number try (from 0) at commit i fails on
// the infrastructure.
func (o *Oracle) infraFails(i, try int) bool {
	if slices.Contains(o.h.InfraAt, i) {
		return true
	}
	for _, f := range o.h.FlakyInfra {
		if f.At == i && f.Of > 0 && try%f.Of < f.Fail {
			return true
		}
	}
	return false
}

// nextDrift advances the host's drift by one run and returns it.
func (o *Oracle) nextDrift() float64 {
	if o.h.DriftSD == 0 {
		return 0
	}
	rho := o.h.DriftCorr
	if o.runs == 0 {
		o.drift = o.h.DriftSD * o.host.NormFloat64()
	} else {
		o.drift = rho*o.drift + math.Sqrt(1-rho*rho)*o.h.DriftSD*o.host.NormFloat64()
	}
	return o.drift
}

// hostLevel returns the host's speed factor for the next run (the runs
// made so far decide the block).
func (o *Oracle) hostLevel() float64 {
	if len(o.h.HostLevels) == 0 || o.h.HostEvery <= 0 {
		return 1
	}
	return o.h.HostLevels[o.runs/o.h.HostEvery%len(o.h.HostLevels)]
}

// keepTree notes a measurement of commit i on host, built there before
// or not: its tree becomes the latest kept, and a commit built before
// whose tree was given up since is built again.
func (o *Oracle) keepTree(i int, host string, builtBefore bool) {
	if o.h.Trees <= 0 {
		return
	}
	if o.trees == nil {
		o.trees = make(map[string][]int)
	}
	kept := o.trees[host]
	if at := slices.Index(kept, i); at >= 0 {
		kept = slices.Delete(kept, at, at+1)
	} else if builtBefore {
		o.rebuilt++
	}
	kept = append(kept, i)
	if len(kept) > o.h.Trees {
		kept = kept[len(kept)-o.h.Trees:]
	}
	o.trees[host] = kept
}

// Record stores values for a commit as if measured before at an unknown
// time (Seq 0: a cache without timestamps); they do not count as runs.
func (o *Oracle) Record(commit string, values ...float64) error {
	i, err := o.index(commit)
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, v := range values {
		o.values[i] = append(o.values[i], bisect.Run{Value: v})
	}
	return nil
}

// Runs returns the number of values the oracle has produced.
func (o *Oracle) Runs() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.runs
}

// Builds returns the number of builds the oracle has made: the distinct
// commits it measured (broken ones included), once per host.
func (o *Oracle) Builds() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.built)
}

// TreeBuilds returns the builds the oracle has made when every host keeps
// History.Trees trees: Builds, and once more for every measurement of a
// commit whose tree had been given up for others since it was built. With
// Trees 0 it is Builds.
func (o *Oracle) TreeBuilds() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.built) + o.rebuilt
}

// index parses a commit identifier of the history.
func (o *Oracle) index(commit string) (int, error) {
	num, ok := strings.CutPrefix(commit, "c")
	i, err := strconv.Atoi(num)
	if !ok || err != nil || i < 0 || i >= o.h.Len {
		return 0, fmt.Errorf("bisecttest: unknown commit %q", commit)
	}
	return i, nil
}
