package bisect

import (
	"context"
	"errors"
	"math"
	"slices"
)

// Several hosts. Machines of one kind still differ in speed (a GPU that
// clocks lower, a node with a slower interconnect), often by as much as
// the change a bisection looks for, so a run of one machine and a run of
// another are not exchangeable. The searches handle it in two parts that
// need each other:
//
//   - Host is a factor of the model: a run's log value is its commit's
//     level plus its machine's offset plus noise. The offsets are
//     estimated from the commits measured on more than one machine (within
//     a commit the level cancels) and taken out before anything is
//     compared; a machine linked to the good end's by no such commit has no
//     offset, and its runs count in no comparison.
//   - The ends are measured on every host (placement, with a HostOracle):
//     the end comparison takes its runs in rounds of one run per host, the
//     two ends alternating; a host that holds no run of an end that counts
//     measures it before any probe; so every host that measures a probe
//     holds runs of both ends and its offset rests on them. The probes of
//     a round rotate over the hosts, so that no commit's runs come from
//     one machine only.
//
// Confirm pairs only runs of one machine, and takes its fresh pairs on
// one host.
//
// A host can leave while a search runs (the host pool takes out a machine
// that keeps failing): an oracle's error wrapping ErrHostGone for a run
// placed on a host takes that host out of the search's placement, counts
// against no commit, and the search goes on with the other hosts; for a
// run placed on no host (every host left) it ends the search with an
// infrastructure error.

// ErrHostGone is wrapped by an oracle's error for a host that left the
// pool: the search places no more runs there.
var ErrHostGone = errors.New("the host left the pool")

// hostFitRounds bounds the alternating fit of levels and offsets; it
// converges in a few rounds when the ends link every machine, as they do.
const hostFitRounds = 200

// hostFitTolerance is the change of every offset (in log units) below
// which the fit has converged.
const hostFitTolerance = 1e-10

// hostOffsets fits the log values of groups (one group per commit,
// hosts[g][k] the machine of value k of group g) to a level per group plus
// an offset per machine, by alternating least squares, and returns the
// offsets and the machines linked to the machine of group ref's first
// value through values of common groups. The offset of that machine is 0.
// With fewer than two machines it returns nil, nil: there is nothing to
// fit, and every value counts as it is.
func hostOffsets(groups [][]float64, hosts [][]string, ref int) (offset map[string]float64, linked map[string]bool) {
	var names []string
	for _, hs := range hosts {
		for _, h := range hs {
			if !slices.Contains(names, h) {
				names = append(names, h)
			}
		}
	}
	if len(names) < 2 {
		return nil, nil
	}
	if ref < 0 || ref >= len(groups) || len(hosts[ref]) == 0 {
		ref = slices.IndexFunc(hosts, func(hs []string) bool { return len(hs) > 0 })
	}
	base := hosts[ref][0]
	linked = linkedHosts(hosts, base)

	offset = make(map[string]float64, len(linked))
	for h := range linked {
		offset[h] = 0
	}
	level := make([]float64, len(groups))
	for range hostFitRounds {
		for g, ys := range groups {
			var sum float64
			var n int
			for k, y := range ys {
				if linked[hosts[g][k]] {
					sum += y - offset[hosts[g][k]]
					n++
				}
			}
			if n > 0 {
				level[g] = sum / float64(n)
			}
		}
		sums, counts := map[string]float64{}, map[string]int{}
		for g, ys := range groups {
			for k, y := range ys {
				if h := hosts[g][k]; linked[h] {
					sums[h] += y - level[g]
					counts[h]++
				}
			}
		}
		shift := sums[base] / float64(counts[base])
		moved := 0.0
		for h := range linked {
			next := sums[h]/float64(counts[h]) - shift
			moved = math.Max(moved, math.Abs(next-offset[h]))
			offset[h] = next
		}
		if moved < hostFitTolerance {
			break
		}
	}
	return offset, linked
}

// linkedHosts returns the machines reachable from base through groups
// that hold values of both: the connected part of the bipartite graph of
// groups and machines.
func linkedHosts(hosts [][]string, base string) map[string]bool {
	linked := map[string]bool{base: true}
	usedGroup := make([]bool, len(hosts))
	for grew := true; grew; {
		grew = false
		for g, hs := range hosts {
			if usedGroup[g] || !slices.ContainsFunc(hs, func(h string) bool { return linked[h] }) {
				continue
			}
			usedGroup[g] = true
			for _, h := range hs {
				if !linked[h] {
					linked[h] = true
					grew = true
				}
			}
		}
	}
	return linked
}

// request is one run to make in a round: of commit i, on host ("" where
// the oracle chooses).
type request struct {
	i    int
	host string
}

// placed reports whether the search places its runs on named hosts.
func (s *search) placed() bool { return s.hostOracle != nil && len(s.opts.Hosts) > 0 }

// place assigns the commits of a round to the hosts: commit j of the
// round to host (j + rounds) mod K, so that the runs of a commit probed
// round after round rotate over the hosts. A commit already placed on a
// host in the round is not placed there again (a host of several slots
// appears several times in Options.Hosts).
func (s *search) place(idx []int) []request {
	out := make([]request, 0, len(idx))
	if !s.placed() {
		for _, i := range idx {
			out = append(out, request{i: i})
		}
		return out
	}
	k := len(s.opts.Hosts)
	for j, i := range idx {
		for step := range k {
			r := request{i: i, host: s.opts.Hosts[(j+s.rounds+step)%k]}
			if !slices.Contains(out, r) {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// endsRound is one round of an end comparison on every host: the two ends
// alternate over the hosts, and which host gets which alternates from
// round to round, so that every host holds runs of both ends after two
// rounds.
func (s *search) endsRound(t endsTest) []request {
	out := make([]request, 0, len(s.opts.Hosts))
	for j, h := range s.opts.Hosts {
		e := t.a
		if (j+s.rounds)%2 == 1 {
			e = t.b
		}
		r := request{i: e, host: h}
		if slices.Contains(out, r) {
			r.i = t.a + t.b - e
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// dropHost takes host, which left the pool with err, out of the search's
// placement.
func (s *search) dropHost(host string, err error) {
	if !slices.Contains(s.opts.Hosts, host) {
		return
	}
	s.opts.Hosts = slices.DeleteFunc(slices.Clone(s.opts.Hosts), func(h string) bool { return h == host })
	s.opts.Parallel = max(1, len(s.opts.Hosts))
	s.log.Info("host left the pool; its runs go to the other hosts", "host", host, "hosts", s.opts.Hosts, "err", err)
}

// confirmOnHosts confirms commit against parent on the first of hosts
// (on no host in particular when there are none), and on the next one
// while the host it was given left the pool.
func confirmOnHosts(ctx context.Context, o Oracle, parent, commit string, hosts []string, opts ConfirmOptions) (Confirmation, error) {
	var tried []string
	for {
		opts.Host = ""
		for _, h := range hosts {
			if !slices.Contains(tried, h) {
				opts.Host = h
				break
			}
		}
		conf, err := Confirm(ctx, o, parent, commit, opts)
		if opts.Host == "" || !errors.Is(err, ErrHostGone) {
			return conf, err
		}
		tried = append(tried, opts.Host)
		// The runs taken on the host that left are in the oracle, not
		// in what was held before.
		opts.Held = nil
	}
}

// runsOn counts the runs of commit i made on host, on any of its nodes.
func (s *search) runsOn(i int, host string) int {
	n := 0
	for _, r := range s.commits[i].runs {
		if r.Host == host {
			n++
		}
	}
	return n
}

// missingEnds returns the runs of the chain's ends that hosts of
// Options.Hosts lack: a run that counts of each end on each host, at most
// one round of them.
func (s *search) missingEnds() []request {
	if !s.placed() {
		return nil
	}
	var out []request
	for _, h := range s.opts.Hosts {
		for _, e := range []int{0, len(s.chain) - 1} {
			r := request{i: e, host: h}
			if !s.countsOn(e, h) && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out[:min(len(out), len(s.opts.Hosts))]
}

// countsOn reports whether a run of commit i on host (any of its nodes)
// counts in the comparisons.
func (s *search) countsOn(i int, host string) bool {
	c := &s.commits[i]
	for k, r := range c.runs {
		if r.Host == host && k < len(c.counts) && c.counts[k] {
			return true
		}
	}
	return false
}
