package loadgen

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Tool is the "tool" of every report: the openai format of perfbot's
// parser reads only documents that carry it.
const Tool = "perfbot-loadgen"

// Report is what one load measured. Metrics use the keys of vLLM's
// result JSON (output_throughput, median_ttft_ms, p99_itl_ms, …), so a
// configuration selects the same names whichever tool measured; a metric
// that nothing measured (TPOT when every request had one token) is left
// out rather than written as zero.
type Report struct {
	Tool string `json:"tool"`
	// Load describes the load (Config.String).
	Load string `json:"load"`
	// Metrics holds every number, by name:
	//
	//	completed, failed                   requests
	//	duration                            s, wall time of the measured load
	//	total_input_tokens, total_output_tokens
	//	request_throughput                  completed requests a second
	//	output_throughput                   output tokens a second
	//	total_token_throughput              input and output tokens a second
	//	request_goodput                     requests within the limits a second (with limits)
	//	{mean,median,p90,p99}_{ttft,tpot,itl,e2el}_ms
	//	{mean,median,p90,p99}_queue_ms      at a Rate: from the scheduled send to the send
	//	spec_decode_*                       see Spec
	Metrics map[string]float64 `json:"metrics"`
	// Errors counts failed requests by error message.
	Errors map[string]int `json:"errors,omitempty"`
	// Spec is the speculative-decoding acceptance the server's metrics
	// gave over the load; nil when it exposes none.
	Spec *Spec `json:"spec_decode,omitempty"`
	// Notes say what the report could not measure (a failed scrape).
	Notes []string `json:"notes,omitempty"`
}

// report computes the metrics of results over the load's duration.
func report(c Config, results []result, duration time.Duration) *Report {
	rep := &Report{Tool: Tool, Load: c.String(), Metrics: map[string]float64{}}
	var ttft, tpot, itl, e2e, queue []float64
	var in, out, good, failed int
	for _, r := range results {
		if r.err != nil {
			failed++
			if rep.Errors == nil {
				rep.Errors = map[string]int{}
			}
			rep.Errors[r.err.Error()]++
			continue
		}
		in += r.promptTokens
		out += r.outputTokens
		ttft = append(ttft, ms(r.ttft))
		if c.Rate > 0 {
			queue = append(queue, ms(r.queued))
		}
		e2e = append(e2e, ms(r.e2e))
		if r.outputTokens > 1 {
			tpot = append(tpot, ms(r.e2e-r.ttft)/float64(r.outputTokens-1))
		}
		worst := time.Duration(0)
		for _, g := range r.itl {
			itl = append(itl, ms(g))
			worst = max(worst, g)
		}
		if (c.TTFTLimit == 0 || r.ttft <= c.TTFTLimit) && (c.ITLLimit == 0 || worst <= c.ITLLimit) {
			good++
		}
	}
	completed := len(results) - failed
	secs := duration.Seconds()
	m := rep.Metrics
	m["completed"] = float64(completed)
	m["failed"] = float64(failed)
	m["duration"] = secs
	m["total_input_tokens"] = float64(in)
	m["total_output_tokens"] = float64(out)
	if secs > 0 {
		m["request_throughput"] = float64(completed) / secs
		m["output_throughput"] = float64(out) / secs
		m["total_token_throughput"] = float64(in+out) / secs
		if c.TTFTLimit > 0 || c.ITLLimit > 0 {
			m["request_goodput"] = float64(good) / secs
		}
	}
	for _, s := range []struct {
		name string
		v    []float64
	}{{"ttft", ttft}, {"tpot", tpot}, {"itl", itl}, {"e2el", e2e}, {"queue", queue}} {
		if len(s.v) == 0 {
			continue
		}
		sort.Float64s(s.v)
		m["mean_"+s.name+"_ms"] = mean(s.v)
		m["median_"+s.name+"_ms"] = percentile(s.v, 50)
		m["p90_"+s.name+"_ms"] = percentile(s.v, 90)
		m["p99_"+s.name+"_ms"] = percentile(s.v, 99)
	}
	return rep
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// percentile returns the p-th percentile of sorted v, interpolated
// linearly between the closest ranks (numpy's default, which vLLM uses).
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 1 {
		return sorted[0]
	}
	rank := p / 100 * float64(len(sorted)-1)
	lo := int(math.Floor(rank))
	hi := min(lo+1, len(sorted)-1)
	return sorted[lo] + (rank-float64(lo))*(sorted[hi]-sorted[lo])
}

// WriteJSON writes the report as one line of JSON, the form perfbot's
// openai format reads.
func (r *Report) WriteJSON(w io.Writer) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// WriteText writes the report for people: the load, every metric, the
// errors and the notes.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "load: %s\n", r.Load)
	for _, k := range slices.Sorted(maps.Keys(r.Metrics)) {
		fmt.Fprintf(tw, "%s\t%.4g\n", k, r.Metrics[k])
	}
	if r.Spec != nil {
		fmt.Fprintf(tw, "spec decode:\t%s\n", r.Spec.Source)
	}
	for _, k := range slices.Sorted(maps.Keys(r.Errors)) {
		fmt.Fprintf(tw, "error (%d requests):\t%s\n", r.Errors[k], k)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(tw, "note:\t%s\n", strings.TrimSpace(n))
	}
	return tw.Flush()
}
