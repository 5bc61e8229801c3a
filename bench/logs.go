package bench

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/stats"
)

var (
	sglangDecode    = regexp.MustCompile(`Decode batch[.,]`)
	sglangGenTput   = regexp.MustCompile(`gen throughput \(token/s\): ([^,\s]+)`)
	sglangAcceptLen = regexp.MustCompile(`accept len: ([^,\s]+)`)
	sglangAcceptRt  = regexp.MustCompile(`accept rate: ([^,\s]+)`)
	sglangPrefix    = regexp.MustCompile(`^\[[^\]]*\bTP(\d+)\b[^\]]*\]`)
)

// parseSGLangLog reads an SGLang server log and reduces its periodic
// "Decode batch" lines to one value per metric for the whole log (one
// run): the median of "gen throughput (token/s)" as "gen_throughput" in
// tok/s, and, with speculative decoding, the medians of "accept len" as
// "accept_len" and "accept rate" as "accept_rate" (unit "value").
//
// The median, because the first line after an idle period reports the
// idle time as slow decoding (0.04 token/s in real logs). Lines from
// tensor-parallel ranks other than TP0 repeat TP0's numbers and are
// skipped. gen throughput counts the tokens since the previous line over
// the wall time since then, idle time included
// (python/sglang/srt/managers/scheduler_metrics_mixin.py): it is only
// meaningful under steady load.
func parseSGLangLog(r io.Reader, file string, _ Options) ([]record.Sample, error) {
	lines, err := readLines(r, file)
	if err != nil {
		return nil, err
	}
	metrics := []struct {
		name   string
		unit   string
		re     *regexp.Regexp
		values []float64
	}{
		{"gen_throughput", "tok/s", sglangGenTput, nil},
		{"accept_len", "value", sglangAcceptLen, nil},
		{"accept_rate", "value", sglangAcceptRt, nil},
	}
	decodeLines := 0
	for i, line := range lines {
		if !sglangDecode.MatchString(line) {
			continue
		}
		if m := sglangPrefix.FindStringSubmatch(line); m != nil && m[1] != "0" {
			continue
		}
		decodeLines++
		for k := range metrics {
			m := metrics[k].re.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			v, err := parseNumber(m[1])
			if err != nil {
				return nil, &OutputError{File: file, Line: i + 1, Text: strings.TrimSpace(line),
					Msg: fmt.Sprintf("%s %q is not a number", metrics[k].name, m[1]), Err: ErrSyntax}
			}
			if err := notFinite(file, i+1, strings.TrimSpace(line), metrics[k].name, v); err != nil {
				return nil, err
			}
			metrics[k].values = append(metrics[k].values, v)
		}
	}
	if decodeLines == 0 {
		return nil, pythonFailure(file, lines, `"Decode batch" log lines`)
	}
	if len(metrics[0].values) == 0 {
		return nil, &OutputError{File: file, Msg: fmt.Sprintf("%d \"Decode batch\" lines but none has \"gen throughput (token/s)\"", decodeLines), Err: ErrSyntax}
	}
	var samples []record.Sample
	for _, m := range metrics {
		if len(m.values) > 0 {
			samples = append(samples, record.Sample{Name: m.name, Unit: m.unit, Value: stats.Median(m.values), Better: record.Higher})
		}
	}
	return samples, nil
}
