package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/record"
)

// openaiTool is the "tool" of the reports of perfbot's load generator
// (package loadgen), the only documents the openai format reads.
const openaiTool = "perfbot-loadgen"

// parseOpenAI reads the report `perfbot loadgen` prints: one line of JSON
// with "tool": "perfbot-loadgen" and its numbers under "metrics", named as
// vLLM's result JSON names them (output_throughput, median_ttft_ms,
// spec_decode_acceptance_length). Other lines (the human summary on
// stderr, a server's log) are skipped; when several reports are there, the
// last one counts. Samples come in name order, with the units of the
// serving formats.
//
// A report in which every request failed, or any did beyond the option
// allow_failed (a count, default 0), fails the benchmark and quotes the
// errors: a load whose requests failed measured something else.
func parseOpenAI(r io.Reader, file string, opts Options) ([]record.Sample, error) {
	lines, err := readLines(r, file)
	if err != nil {
		return nil, err
	}
	allow := 0.0
	if s := opts["allow_failed"]; s != "" {
		if allow, err = strconv.ParseFloat(s, 64); err != nil || !(allow >= 0) {
			return nil, &OutputError{File: file, Msg: fmt.Sprintf("option allow_failed %q: want a count of requests", s), Err: ErrSyntax}
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		t := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(t, "{") || !strings.Contains(t, `"`+openaiTool+`"`) {
			continue
		}
		var doc struct {
			Tool    string                     `json:"tool"`
			Metrics map[string]json.RawMessage `json:"metrics"`
			Errors  map[string]int             `json:"errors"`
		}
		if err := json.Unmarshal([]byte(t), &doc); err != nil || doc.Tool != openaiTool {
			msg := "a load generator report that is not valid JSON"
			if err == nil {
				msg = fmt.Sprintf("tool is %q, want %q", doc.Tool, openaiTool)
			}
			return nil, &OutputError{File: file, Line: i + 1, Text: clipText(t), Msg: msg, Err: ErrSyntax}
		}
		return openaiSamples(doc.Metrics, doc.Errors, allow, file, i+1, t)
	}
	return nil, noResults(file, lines, "load generator report ("+openaiTool+" JSON line)")
}

func openaiSamples(metrics map[string]json.RawMessage, errs map[string]int, allow float64, file string, line int, text string) ([]record.Sample, error) {
	var samples []record.Sample
	for _, name := range slices.Sorted(maps.Keys(metrics)) {
		raw := bytes.TrimSpace(metrics[name])
		v, err := parseNumber(string(raw))
		if err != nil || name == "" {
			return nil, &OutputError{File: file, Line: line, Text: clipText(text),
				Msg: fmt.Sprintf("metric %q is %s, not a number", name, clipText(string(raw))), Err: ErrSyntax}
		}
		if err := notFinite(file, line, clipText(text), name, v); err != nil {
			return nil, err
		}
		samples = append(samples, servingSample(name, v))
	}
	if len(samples) == 0 {
		return nil, &OutputError{File: file, Line: line, Text: clipText(text), Msg: "the report holds no metrics", Err: ErrNoResults}
	}
	completed, failed := -1.0, 0.0
	for _, s := range samples {
		switch s.Name {
		case "completed":
			completed = s.Value
		case "failed":
			failed = s.Value
		}
	}
	if completed == 0 || failed > allow {
		why := make([]string, 0, len(errs))
		for _, msg := range slices.Sorted(maps.Keys(errs)) {
			why = append(why, fmt.Sprintf("%d× %s", errs[msg], msg))
		}
		return nil, &OutputError{File: file, Line: line, Text: clipText(strings.Join(why, "; ")),
			Msg: fmt.Sprintf("%g of %g requests failed", failed, failed+max(completed, 0)), Err: ErrBenchmarkFailed}
	}
	return samples, nil
}

// clipText shortens a quoted line of output.
func clipText(s string) string {
	if len(s) <= 300 {
		return s
	}
	return strings.ToValidUTF8(s[:300], "") + "…"
}
