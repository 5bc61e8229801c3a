package bench

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/stats"
)

// SGLang's python -m sglang.bench_one_batch runs the model directly (no
// server, no scheduler, no speculative decoding) for every batch size ×
// input length × output length of its sweep, after one warm-up run. Its
// printing, from python/sglang/bench_one_batch.py (latency_test_run_once):
//
//	Warmup ...
//	Prefill. latency: {:6.5f} s, throughput: {:9.2f} token/s
//	Decode {i}. Batch size: {bs}, latency: {:6.5f} s, throughput: {:9.2f} token/s
//	Decode.  median latency: {:6.5f} s, median throughput: {:9.2f} token/s
//	Total. latency: {:6.3f} s, throughput: {:9.2f} token/s
//	Benchmark ...
//	skipping ({bs}, {in}, {out}) due to max batch size limit
//
// Older versions (bench_latency.py, 2024) printed every decode step as
// "Decode.  latency: … s, throughput: … token/s"; their median is taken
// here. The result file (--result-filename, JSON lines appended by TP rank
// 0) holds the same numbers under the keys used as names below.
var (
	oneBatchPrefill = regexp.MustCompile(`^Prefill\.\s+latency:\s*(\S+)\s+s,\s+throughput:\s*(\S+)\s+token/s\s*$`)
	oneBatchStep    = regexp.MustCompile(`^Decode\s+(\d+)\.\s+Batch size:\s*(\d+),\s+latency:\s*(\S+)\s+s,\s+throughput:\s*(\S+)\s+token/s\s*$`)
	oneBatchOldStep = regexp.MustCompile(`^Decode\.\s+latency:\s*(\S+)\s+s,\s+throughput:\s*(\S+)\s+token/s\s*$`)
	oneBatchMedian  = regexp.MustCompile(`^Decode\.\s+median latency:\s*(\S+)\s+s,\s+median throughput:\s*(\S+)\s+token/s\s*$`)
	oneBatchTotal   = regexp.MustCompile(`^Total\.\s+latency:\s*(\S+)\s+s,\s+throughput:\s*(\S+)\s+token/s\s*$`)
	// oneBatchLine is what every result line starts with; one that starts
	// so but does not match its pattern is malformed.
	oneBatchLine = regexp.MustCompile(`^(Prefill|Decode|Total)[ .]`)
)

// oneBatchRun is one configuration of the sweep as printed.
type oneBatchRun struct {
	line      int // of its prefill line
	batch     int // 0 when no decode step named it
	values    []record.Sample
	stepLat   []float64 // the legacy per-step lines
	stepTput  []float64
	hasMedian bool
}

// parseSGLangOneBatch reads bench_one_batch's printed output, or its
// result file, into samples named "bs=N/KEY" with the result file's keys:
// prefill_latency, median_decode_latency, total_latency (s, lower is
// better) and prefill_throughput, median_decode_throughput,
// overall_throughput (tok/s, higher is better). Batch sizes repeated over
// input or output lengths give several samples of one name. The warm-up
// run is not a result and is skipped.
func parseSGLangOneBatch(r io.Reader, file string, _ Options) ([]record.Sample, error) {
	lines, err := readLines(r, file)
	if err != nil {
		return nil, err
	}
	if looksLikeJSONObject(lines) {
		return oneBatchJSON(lines, file)
	}
	var runs []*oneBatchRun
	var cur *oneBatchRun
	warmup := false
	for i, raw := range lines {
		line := strings.TrimSpace(raw)
		n := i + 1
		switch {
		case strings.HasPrefix(line, "Warmup ..."):
			warmup, cur = true, nil
			continue
		case strings.HasPrefix(line, "Benchmark ..."):
			warmup, cur = false, nil
			continue
		case warmup || !oneBatchLine.MatchString(line):
			continue
		}
		if m := oneBatchPrefill.FindStringSubmatch(line); m != nil {
			cur = &oneBatchRun{line: n}
			runs = append(runs, cur)
			if err := cur.add(file, n, line, "prefill_latency", m[1], "prefill_throughput", m[2]); err != nil {
				return nil, err
			}
			continue
		}
		if cur == nil {
			return nil, &OutputError{File: file, Line: n, Text: line, Msg: "decode or total line before any prefill line", Err: ErrSyntax}
		}
		var err error
		switch m := matchOneBatch(line); {
		case m.step != nil:
			bs, _ := strconv.Atoi(m.step[2])
			cur.batch = bs
		case m.old != nil:
			err = cur.step(file, n, line, m.old[1], m.old[2])
		case m.median != nil:
			cur.hasMedian = true
			err = cur.add(file, n, line, "median_decode_latency", m.median[1], "median_decode_throughput", m.median[2])
		case m.total != nil:
			err = cur.add(file, n, line, "total_latency", m.total[1], "overall_throughput", m.total[2])
			cur = nil // a configuration ends with its total
		default:
			err = &OutputError{File: file, Line: n, Text: line, Msg: "not a bench_one_batch result line", Err: ErrSyntax}
		}
		if err != nil {
			return nil, err
		}
	}
	var samples []record.Sample
	for _, run := range runs {
		samples = append(samples, run.samples()...)
	}
	if len(samples) == 0 {
		return nil, pythonFailure(file, lines, `bench_one_batch results ("Prefill. latency: …")`)
	}
	return samples, nil
}

type oneBatchMatch struct{ step, old, median, total []string }

func matchOneBatch(line string) oneBatchMatch {
	return oneBatchMatch{
		step:   oneBatchStep.FindStringSubmatch(line),
		old:    oneBatchOldStep.FindStringSubmatch(line),
		median: oneBatchMedian.FindStringSubmatch(line),
		total:  oneBatchTotal.FindStringSubmatch(line),
	}
}

// add records a latency and a throughput read from line n.
func (r *oneBatchRun) add(file string, n int, line, latName, lat, tputName, tput string) error {
	l, err := numberAt(file, n, line, latName, lat)
	if err != nil {
		return err
	}
	t, err := numberAt(file, n, line, tputName, tput)
	if err != nil {
		return err
	}
	r.values = append(r.values,
		record.Sample{Name: latName, Unit: "s", Value: l, Better: record.Lower},
		record.Sample{Name: tputName, Unit: "tok/s", Value: t, Better: record.Higher})
	return nil
}

// step records a legacy per-step decode line.
func (r *oneBatchRun) step(file string, n int, line, lat, tput string) error {
	l, err := numberAt(file, n, line, "decode latency", lat)
	if err != nil {
		return err
	}
	t, err := numberAt(file, n, line, "decode throughput", tput)
	if err != nil {
		return err
	}
	r.stepLat, r.stepTput = append(r.stepLat, l), append(r.stepTput, t)
	return nil
}

// samples names the run's values by its batch size, and gives legacy
// output the medians newer versions print.
func (r *oneBatchRun) samples() []record.Sample {
	values := r.values
	if !r.hasMedian && len(r.stepLat) > 0 {
		values = append(values,
			record.Sample{Name: "median_decode_latency", Unit: "s", Value: stats.Median(r.stepLat), Better: record.Lower},
			record.Sample{Name: "median_decode_throughput", Unit: "tok/s", Value: stats.Median(r.stepTput), Better: record.Higher})
	}
	out := make([]record.Sample, len(values))
	for i, s := range values {
		if r.batch > 0 {
			s.Name = fmt.Sprintf("bs=%d/%s", r.batch, s.Name)
		}
		out[i] = s
	}
	return out
}

func numberAt(file string, n int, line, what, s string) (float64, error) {
	v, err := parseNumber(s)
	if err != nil {
		return 0, &OutputError{File: file, Line: n, Text: line, Msg: fmt.Sprintf("%s %q is not a number", what, s), Err: ErrSyntax}
	}
	return v, notFinite(file, n, line, what, v)
}

// oneBatchKeys are the result file's numbers and their units.
var oneBatchKeys = []resultKey{
	{"prefill_latency", "s", record.Lower},
	{"prefill_throughput", "tok/s", record.Higher},
	{"median_decode_latency", "s", record.Lower},
	{"median_decode_throughput", "tok/s", record.Higher},
	{"total_latency", "s", record.Lower},
	{"overall_throughput", "tok/s", record.Higher},
}

// oneBatchJSON reads the result file: one object a configuration.
func oneBatchJSON(lines []string, file string) ([]record.Sample, error) {
	docs, err := decodeJSONObjects(lines, file)
	if err != nil {
		return nil, err
	}
	var samples []record.Sample
	for _, d := range docs {
		prefix := ""
		if bs, ok := jsonNumber(d.obj["batch_size"]); ok && isFinite(bs) {
			prefix = fmt.Sprintf("bs=%g/", bs)
		}
		got, err := keySamples(d, oneBatchKeys, prefix, lines, file)
		if err != nil {
			return nil, err
		}
		samples = append(samples, got...)
	}
	if len(samples) == 0 {
		return nil, noResults(file, lines, "bench_one_batch result keys (prefill_latency, median_decode_throughput, …)")
	}
	return samples, nil
}

// looksLikeJSONObject reports whether the first line that is not blank or
// a "#" comment opens a JSON object: a result file. (A log line can start
// with "[", as SGLang's "[2026-11-20 09:12:41 TP0]" prefix does.)
func looksLikeJSONObject(lines []string) bool {
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		return t[0] == '{'
	}
	return false
}
