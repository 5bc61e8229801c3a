package main

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/bisect/bisecttest"
	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/record"
)

// scenario is one row group of the table: a way to draw a history and the
// outcome that counts as right.
type scenario struct {
	name string
	cv   float64
	// draw returns the history of one trial.
	draw func(r *rand.Rand) *bisecttest.History
	// parallel is the number of perfbot hosts (0: one), measured at once
	// wherever the oracle puts the runs.
	parallel int
	// hosts are the speeds of hosts the search places its runs on
	// (bisecttest.History.Hosts); empty, one host.
	hosts []float64
	// noChange marks the row whose right answer is "not reproduced".
	noChange bool
	// job runs the whole job as the command line does (bisect.Locate with
	// the configuration's defaults) instead of the search alone, and only
	// that strategy.
	job bool
	// floor adds the known-levels search (runKnownLevels), which only a
	// row of one change on a steady host fits.
	floor bool
	// target is what perfbot (or perfbot job) should reach on the row;
	// nil for rows without one.
	target *target
}

// target is a row's goal: at most maxRuns mean runs (0: no bound) at an
// accuracy of at least minAccuracy (0: no bound).
type target struct {
	maxRuns     float64
	minAccuracy float64
}

// met reports whether a row's summary reaches the target.
func (t target) met(s summary) bool {
	return (t.maxRuns == 0 || s.meanRuns <= t.maxRuns) && s.accuracy >= t.minAccuracy
}

// String says the target the way the table shows it.
func (t target) String() string {
	switch {
	case t.maxRuns == 0:
		return sprintf("accuracy ≥ %.3f", t.minAccuracy)
	case t.minAccuracy == 0:
		return sprintf("≤ %.0f runs", t.maxRuns)
	}
	return sprintf("≤ %.0f runs at accuracy ≥ %.3f", t.maxRuns, t.minAccuracy)
}

// targets are the goals of issue 34, by scenario name.
var targets = map[string]target{
	"N=256 CV=2% 5% drop":                                {maxRuns: 20, minAccuracy: 0.995},
	"N=256 CV=5% 5% drop":                                {maxRuns: 80, minAccuracy: 0.99},
	"N=1024 CV=2% 5% drop":                               {maxRuns: 22, minAccuracy: 0.995},
	"N=256 CV=2% no change":                              {maxRuns: 26},
	"N=256 CV=2% two 3% drops":                           {minAccuracy: 0.95},
	"N=256 CV=2% 5% drop, host drift (AR1 sd 4%, ρ 0.9)": {maxRuns: 50, minAccuracy: 0.99},
	"N=64 CV=2% 5% drop, whole job (CLI)":                {maxRuns: 18},
}

// drop5 is the level factor of a 5% drop.
const drop5 = 0.95

// hostSpeeds are four hosts whose speeds differ by up to 5% (the fastest
// is 4.9% faster than the slowest), as machines of one kind do.
var hostSpeeds = []float64{1.000, 0.953, 0.984, 0.969}

func scenarios() []scenario {
	var out []scenario
	for _, cv := range []float64{0.02, 0.05} {
		for _, n := range []int{64, 256, 1024} {
			out = append(out, scenario{
				name:  sprintf("N=%d CV=%.0f%% 5%% drop", n, cv*100),
				cv:    cv,
				floor: true,
				draw: func(r *rand.Rand) *bisecttest.History {
					return &bisecttest.History{Len: n + 1, CV: cv, Changes: []bisecttest.Change{{At: 1 + r.IntN(n), Factor: drop5}}}
				},
			})
		}
	}
	out = append(out,
		scenario{
			name: "N=256 CV=2% two 3% drops",
			cv:   0.02,
			draw: func(r *rand.Rand) *bisecttest.History {
				a := 1 + r.IntN(256)
				b := a
				for b == a {
					b = 1 + r.IntN(256)
				}
				return &bisecttest.History{Len: 257, CV: 0.02, Changes: []bisecttest.Change{{At: a, Factor: 0.97}, {At: b, Factor: 0.97}}}
			},
		},
		scenario{
			name: "N=256 CV=2% 5% drop, 5% outlier runs (-5σ)",
			cv:   0.02,
			draw: func(r *rand.Rand) *bisecttest.History {
				return &bisecttest.History{Len: 257, CV: 0.02, Changes: []bisecttest.Change{{At: 1 + r.IntN(256), Factor: drop5}},
					OutlierRate: 0.05, OutlierShift: -5}
			},
		},
		scenario{
			name: "N=256 CV=2% 5% drop, host drift (AR1 sd 4%, ρ 0.9)",
			cv:   0.02,
			draw: func(r *rand.Rand) *bisecttest.History {
				return &bisecttest.History{Len: 257, CV: 0.02, Changes: []bisecttest.Change{{At: 1 + r.IntN(256), Factor: drop5}},
					DriftSD: 0.04, DriftCorr: 0.9}
			},
		},
		scenario{
			name: "N=256 CV=2% no change",
			cv:   0.02,
			draw: func(r *rand.Rand) *bisecttest.History {
				return &bisecttest.History{Len: 257, CV: 0.02}
			},
			noChange: true,
		},
		scenario{
			name: "N=64 CV=2% 5% drop, good end cached 28% slower",
			cv:   0.02,
			draw: func(r *rand.Rand) *bisecttest.History {
				return &bisecttest.History{Len: 65, CV: 0.02, Changes: []bisecttest.Change{{At: 1 + r.IntN(64), Factor: drop5}},
					Cached: []bisecttest.Cached{{At: 0, Runs: 55, Host: 0.72}}}
			},
		},
		scenario{
			name: "N=64 CV=2% 5% drop, whole job (CLI)",
			cv:   0.02,
			job:  true,
			draw: func(r *rand.Rand) *bisecttest.History {
				return &bisecttest.History{Len: 65, CV: 0.02, Changes: []bisecttest.Change{{At: 1 + r.IntN(64), Factor: drop5}}}
			},
		},
		scenario{
			name:     "N=64 CV=2% no change, whole job (CLI)",
			cv:       0.02,
			job:      true,
			noChange: true,
			draw: func(r *rand.Rand) *bisecttest.History {
				return &bisecttest.History{Len: 65, CV: 0.02}
			},
		},
		scenario{
			name:     "N=256 CV=2% 5% drop, K=4 hosts",
			cv:       0.02,
			parallel: 4,
			draw: func(r *rand.Rand) *bisecttest.History {
				return &bisecttest.History{Len: 257, CV: 0.02, Changes: []bisecttest.Change{{At: 1 + r.IntN(256), Factor: drop5}}}
			},
		},
		scenario{
			name:  "N=256 CV=2% 5% drop, K=4 hosts 5% apart",
			cv:    0.02,
			hosts: hostSpeeds,
			draw: func(r *rand.Rand) *bisecttest.History {
				return &bisecttest.History{Len: 257, CV: 0.02, Changes: []bisecttest.Change{{At: 1 + r.IntN(256), Factor: drop5}}, Hosts: hostSpeeds}
			},
		},
	)
	for j := range out {
		if t, ok := targets[out[j].name]; ok {
			out[j].target = &t
		}
	}
	return out
}

// outcome is what one strategy reported in one trial.
type outcome struct {
	culprits    []int
	reproduced  bool // false: the strategy said the ends do not differ
	runs, build int
	// rounds is the wall time in rounds (runs made at once count once);
	// 0 means one run at a time, as many rounds as runs.
	rounds int
	// confidence is the least confidence reported for a culprit (perfbot
	// only; 0 otherwise).
	confidence float64
}

// strategy is one way to search a history.
type strategy struct {
	name string
	run  func(ctx context.Context, h *bisecttest.History, o *bisecttest.Oracle) (outcome, error)
}

func strategies(sc scenario) []strategy {
	k := 10
	if sc.cv > 0.03 {
		k = 30
	}
	if sc.job {
		return []strategy{{name: "perfbot job", run: runJob}}
	}
	out := []strategy{{name: "perfbot", run: func(ctx context.Context, h *bisecttest.History, o *bisecttest.Oracle) (outcome, error) {
		return runPerfbot(ctx, h, o, sc.parallel, sc.hosts)
	}}}
	if sc.parallel > 1 || len(sc.hosts) > 0 {
		return out
	}
	out = append(out,
		strategy{name: sprintf("plain k=%d", k), run: func(ctx context.Context, h *bisecttest.History, o *bisecttest.Oracle) (outcome, error) {
			return runPlain(ctx, h, o, k)
		}},
		strategy{name: "pinpoint-like", run: func(ctx context.Context, h *bisecttest.History, o *bisecttest.Oracle) (outcome, error) {
			return runPinpoint(ctx, h, o, math.Log(1/drop5))
		}},
	)
	if sc.floor {
		out = append(out, strategy{name: "known levels (floor)", run: runKnownLevels})
	}
	return out
}

func runPerfbot(ctx context.Context, h *bisecttest.History, o *bisecttest.Oracle, parallel int, speeds []float64) (outcome, error) {
	opts := bisect.Options{Parallel: parallel}
	for j := range speeds {
		opts.Hosts = append(opts.Hosts, bisecttest.HostName(j))
	}
	if len(opts.Hosts) > 0 {
		opts.Parallel = 0
	}
	res, err := bisect.Bisect(ctx, h.Chain(), o, opts)
	if err != nil {
		return outcome{}, err
	}
	out := outcome{reproduced: res.Verdict != record.OutcomeNotReproduced, runs: o.Runs(), build: o.Builds(), rounds: res.Rounds}
	for _, c := range res.Culprits {
		out.culprits = append(out.culprits, c.Index)
	}
	return out, nil
}

// runJob runs what `perfbot bisect --good G --bad B` runs: bisect.Locate
// (search, confirmation, search again on an unconfirmed culprit) with the
// options the service builds from the configuration's defaults. The
// command's evidence reuses the confirmation's runs and measures nothing.
func runJob(ctx context.Context, h *bisecttest.History, o *bisecttest.Oracle) (outcome, error) {
	opts, err := cliOptions()
	if err != nil {
		return outcome{}, err
	}
	res, err := bisect.Locate(ctx, h.Chain(), o, opts)
	if err != nil {
		return outcome{}, err
	}
	out := outcome{reproduced: res.Verdict != record.OutcomeNotReproduced, runs: o.Runs(), build: o.Builds(), rounds: res.Rounds, confidence: 1}
	for _, c := range res.Culprits {
		out.culprits = append(out.culprits, c.Index)
		out.confidence = min(out.confidence, c.Confidence)
	}
	return out, nil
}

// cliOptions are the bisect.Options `perfbot bisect` uses on a noise
// repository (internal/noisyrepo): its configuration sets no bisect key,
// so every value is the configuration's default, mapped as the service
// maps it (one host, a higher-is-better metric, a regression searched).
func cliOptions() (bisect.Options, error) {
	cfg, err := config.Parse([]byte(noisyConfig), "perfbot.yaml")
	if err != nil {
		return bisect.Options{}, err
	}
	return bisect.Options{
		Confidence:  cfg.Bisect.Confidence,
		MinEffect:   cfg.Bisect.MinEffect,
		MaxRuns:     cfg.Bisect.MaxRuns,
		InitialRuns: cfg.Bisect.Repeats,
		Better:      record.Higher,
		Direction:   record.Regression,
		Parallel:    1,
	}, nil
}

// noisyConfig is the shape of a noise repository's configuration, without
// a bisect section.
const noisyConfig = `repo: {url: ./repo, branch: main}
benchmarks:
  - {name: decode, run: sh ./bench.sh, format: gobench, timeout: 1m}
metrics:
  - {name: tok_s, benchmark: decode, select: Decode, unit: tok/s, better: higher, primary: true}
`

// summary aggregates the trials of one row.
type summary struct {
	accuracy, meanRuns, meanBuilds, meanRounds float64
	p90Runs                                    int
	misses                                     misses
}

// misses counts the wrong outcomes of a row by kind.
type misses struct {
	wrong int // as many culprits as changes, not all of them right
	extra int // every change found, plus commits that changed nothing
	short int // some changes found, no wrong commit, others missed
	none  int // no culprit where there is a change, or one where there is none
}

func (m misses) String() string {
	return sprintf("%d/%d/%d/%d", m.wrong, m.extra, m.short, m.none)
}

// add counts one wrong outcome by its kind.
func (m *misses) add(sc scenario, h *bisecttest.History, out outcome) {
	truth := h.Culprits()
	if sc.noChange || len(out.culprits) == 0 {
		m.none++
		return
	}
	var hits int
	for _, c := range out.culprits {
		if slices.Contains(truth, c) {
			hits++
		}
	}
	switch {
	case hits == len(truth) && len(out.culprits) > hits:
		m.extra++
	case hits == len(out.culprits) && hits < len(truth):
		m.short++
	default:
		m.wrong++
	}
}

// simulate runs trials of one strategy on one scenario on workers
// goroutines. Trial t of a row always sees the same history and noise.
func simulate(ctx context.Context, sc scenario, st strategy, trials int, seed int64, workers int) (summary, error) {
	type result struct {
		right       bool
		runs, build int
		out         outcome
		h           *bisecttest.History
		err         error
	}
	results := make([]result, trials)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for t := range next {
				r := rand.New(rand.NewPCG(uint64(seed), uint64(t)))
				h := sc.draw(r)
				o := h.Oracle(seed*1_000_003 + int64(t))
				out, err := st.run(ctx, h, o)
				results[t] = result{right: judge(sc, h, out), runs: out.runs, build: out.build, out: out, h: h, err: err}
			}
		})
	}
	for t := range trials {
		if ctx.Err() != nil {
			break
		}
		next <- t
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return summary{}, err
	}
	var s summary
	runs := make([]int, trials)
	for t, r := range results {
		if r.err != nil {
			return summary{}, errors.Join(errors.New(sprintf("trial %d", t)), r.err)
		}
		if r.right {
			s.accuracy++
		} else {
			s.misses.add(sc, r.h, r.out)
		}
		s.meanRuns += float64(r.runs)
		s.meanBuilds += float64(r.build)
		if r.out.rounds > 0 {
			s.meanRounds += float64(r.out.rounds)
		} else {
			s.meanRounds += float64(r.runs)
		}
		runs[t] = r.runs
	}
	n := float64(trials)
	s.accuracy /= n
	s.meanRuns /= n
	s.meanBuilds /= n
	s.meanRounds /= n
	slices.Sort(runs)
	s.p90Runs = runs[int(math.Ceil(0.9*n))-1]
	return s, nil
}

// judge says whether an outcome is right: the exact set of culprits, or
// "not reproduced" where nothing changed.
func judge(sc scenario, h *bisecttest.History, out outcome) bool {
	if sc.noChange {
		return !out.reproduced
	}
	got := slices.Clone(out.culprits)
	slices.Sort(got)
	return out.reproduced && slices.Equal(got, h.Culprits())
}
