package bench

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/record"
)

// nccl-tests units. Values keep the units the table prints; the kind of
// bandwidth goes into the unit so that one name (a row) carries all three
// measurements and the units stay single words (the Go benchmark format
// splits on spaces).
const (
	ncclTimeUnit  = "us"         // the "time" (or "cputime") column, microseconds
	ncclAlgBWUnit = "algbw-GB/s" // algorithm bandwidth, 1e9 bytes per second
	ncclBusBWUnit = "busbw-GB/s" // bus bandwidth, 1e9 bytes per second
	ncclAvgName   = "avg"        // the "# Avg bus bandwidth" footer, in busbw-GB/s
)

var (
	ncclAvgLine      = regexp.MustCompile(`^#\s*Avg bus bandwidth\s*:\s*(\S+)\s*(\S*)`)
	ncclOOBLine      = regexp.MustCompile(`^#\s*Out of bounds values\s*:\s*(\d+)\s*(\S*)`)
	ncclFailure      = regexp.MustCompile(`Test (NCCL |CUDA )?failure|NCCL WARN|NCCL error`)
	ncclColumnHeader = regexp.MustCompile(`^#\s*size\s+count\s`)
)

// ncclColumns holds the field positions of one nccl-tests table, found
// from its column header (layouts differ between versions: the root
// column, "error" versus "#wrong", -I and -S add columns).
type ncclColumns struct {
	fields int
	typ    int // -1 when absent
	redop  int
	time   [2]int // out-of-place, in-place
	algbw  [2]int
	busbw  [2]int
	wrong  [2]int
	header int // line number of the header
}

var (
	ncclPlaces      = [2]string{"out-of-place", "in-place"}
	ncclColumnNames = [3]string{"time", "algbw", "busbw"}
)

// parseNCCLTests reads the stdout of an nccl-tests binary (all_reduce_perf
// and its siblings). Each table row becomes three samples named
// "size=<bytes>/<place>" where place is "out-of-place" or "in-place":
// time in "us", algorithm bandwidth in "algbw-GB/s" and bus bandwidth in
// "busbw-GB/s". When the output holds more than one data type or
// reduction (-d all, -o all), the name carries them too:
// "size=1024/type=half/redop=sum/in-place". The footer "# Avg bus
// bandwidth" becomes the sample "avg" in busbw-GB/s; it averages every
// row, small sizes included, so a fixed large size is the better signal.
//
// Several complete runs in one output give repeated names (Select takes
// their median). A column header printed more than once within one run
// means the binary was built without MPI=1 but started under mpirun (N
// independent one-rank jobs); that, wrong values (#wrong > 0, "Out of
// bounds values : N FAILED") and "Test ... failure" lines are errors.
// The "error" column of old versions (a maximum deviation, not a count) is
// not checked.
func parseNCCLTests(r io.Reader, file string, _ Options) ([]record.Sample, error) {
	lines, err := readLines(r, file)
	if err != nil {
		return nil, err
	}
	type row struct {
		size, typ, redop string
		vals             [2][3]float64
		has              [2]bool
	}
	var (
		rows     []row
		avg      []float64
		cols     *ncclColumns
		inRun    bool // a header was seen and its footer not yet
		types    = map[string]bool{}
		redops   = map[string]bool{}
		hasFails []string
		failLine int
		// nonFinite is the first NaN or infinite value; a failure line
		// printed with it says more, so it is reported after them.
		nonFinite error
	)
	for i, line := range lines {
		n := i + 1
		trimmed := strings.TrimSpace(line)
		if ncclFailure.MatchString(trimmed) {
			if failLine == 0 {
				failLine = n
			}
			hasFails = append(hasFails, trimmed)
			continue
		}
		if ncclColumnHeader.MatchString(trimmed) {
			if inRun && cols != nil {
				return nil, &OutputError{File: file, Line: n, Text: trimmed, Err: ErrBenchmarkFailed,
					Msg: fmt.Sprintf("column header printed again before the run that began at line %d ended: "+
						"the binary was started under mpirun without being built with MPI=1, so each rank ran alone", cols.header)}
			}
			c, err := ncclParseHeader(trimmed, n)
			if err != nil {
				return nil, &OutputError{File: file, Line: n, Text: trimmed, Msg: err.Error(), Err: ErrSyntax}
			}
			cols, inRun = c, true
			continue
		}
		if m := ncclOOBLine.FindStringSubmatch(trimmed); m != nil {
			if m[1] != "0" || m[2] == "FAILED" {
				return nil, &OutputError{File: file, Line: n, Text: trimmed, Msg: "results failed validation", Err: ErrBenchmarkFailed}
			}
			continue
		}
		if m := ncclAvgLine.FindStringSubmatch(trimmed); m != nil {
			v, err := parseNumber(m[1])
			if err != nil {
				return nil, &OutputError{File: file, Line: n, Text: trimmed, Msg: "bad average bus bandwidth", Err: ErrSyntax}
			}
			if nonFinite == nil {
				nonFinite = notFinite(file, n, trimmed, "average bus bandwidth", v)
			}
			if m[2] == "FAILED" {
				return nil, &OutputError{File: file, Line: n, Text: trimmed, Msg: "average bus bandwidth below NCCL_TESTS_MIN_BW", Err: ErrBenchmarkFailed}
			}
			avg = append(avg, v)
			inRun = false
			continue
		}
		f := strings.Fields(trimmed)
		if strings.HasPrefix(trimmed, "#") || len(f) < 2 || !isInt(f[0]) || !isInt(f[1]) {
			continue
		}
		if cols == nil {
			return nil, &OutputError{File: file, Line: n, Text: trimmed, Msg: "data row before any column header", Err: ErrSyntax}
		}
		if len(f) < cols.fields {
			return nil, &OutputError{File: file, Line: n, Text: trimmed,
				Msg: fmt.Sprintf("row has %d fields, the header at line %d has %d (truncated?)", len(f), cols.header, cols.fields), Err: ErrSyntax}
		}
		rw := row{size: f[0]}
		if cols.typ >= 0 {
			rw.typ = f[cols.typ]
		}
		if cols.redop >= 0 {
			rw.redop = f[cols.redop]
		}
		types[rw.typ], redops[rw.redop] = true, true
		for p := range ncclPlaces {
			if cols.time[p] < 0 {
				continue
			}
			if w := cols.wrong[p]; w >= 0 && f[w] != "N/A" && f[w] != "0" {
				return nil, &OutputError{File: file, Line: n, Text: trimmed,
					Msg: fmt.Sprintf("%s result has %s wrong values", ncclPlaces[p], f[w]), Err: ErrBenchmarkFailed}
			}
			for k, idx := range [3]int{cols.time[p], cols.algbw[p], cols.busbw[p]} {
				v, err := parseNumber(f[idx])
				if err != nil {
					return nil, &OutputError{File: file, Line: n, Text: trimmed,
						Msg: fmt.Sprintf("field %d (%q) is not a number", idx+1, f[idx]), Err: ErrSyntax}
				}
				if nonFinite == nil {
					nonFinite = notFinite(file, n, trimmed, fmt.Sprintf("%s %s", ncclPlaces[p], ncclColumnNames[k]), v)
				}
				rw.vals[p][k] = v
			}
			rw.has[p] = true
		}
		rows = append(rows, rw)
	}
	if len(hasFails) > 0 {
		return nil, &OutputError{File: file, Line: failLine, Text: strings.Join(first(hasFails, 3), " | "),
			Msg: "nccl-tests reported a failure", Err: ErrBenchmarkFailed}
	}
	if nonFinite != nil {
		return nil, nonFinite
	}
	if len(rows) == 0 {
		return nil, noResults(file, lines, "nccl-tests result rows")
	}
	if inRun {
		n, last := lastNonEmpty(lines)
		return nil, &OutputError{File: file, Line: n, Text: strings.TrimSpace(last),
			Msg: "output ends before the \"# Avg bus bandwidth\" footer (truncated?)", Err: ErrSyntax}
	}

	var samples []record.Sample
	for _, rw := range rows {
		name := "size=" + rw.size
		if len(types) > 1 {
			name += "/type=" + rw.typ
		}
		if len(redops) > 1 {
			name += "/redop=" + rw.redop
		}
		for p, place := range ncclPlaces {
			if !rw.has[p] {
				continue
			}
			full := name + "/" + place
			samples = append(samples,
				record.Sample{Name: full, Unit: ncclTimeUnit, Value: rw.vals[p][0], Better: record.Lower},
				record.Sample{Name: full, Unit: ncclAlgBWUnit, Value: rw.vals[p][1], Better: record.Higher},
				record.Sample{Name: full, Unit: ncclBusBWUnit, Value: rw.vals[p][2], Better: record.Higher})
		}
	}
	for _, v := range avg {
		samples = append(samples, record.Sample{Name: ncclAvgName, Unit: ncclBusBWUnit, Value: v, Better: record.Higher})
	}
	return samples, nil
}

// ncclParseHeader finds the columns of a table from its header line, e.g.
// "#  size  count  type  redop  root  time  algbw  busbw #wrong  time ...".
func ncclParseHeader(line string, n int) (*ncclColumns, error) {
	f := strings.Fields(strings.TrimPrefix(line, "#"))
	c := &ncclColumns{fields: len(f), typ: -1, redop: -1, header: n,
		time: [2]int{-1, -1}, algbw: [2]int{-1, -1}, busbw: [2]int{-1, -1}, wrong: [2]int{-1, -1}}
	place := -1
	for i, name := range f {
		switch name {
		case "type":
			c.typ = i
		case "redop":
			c.redop = i
		case "time", "cputime":
			place++
			if place < 2 {
				c.time[place] = i
			}
		case "algbw":
			if place >= 0 && place < 2 {
				c.algbw[place] = i
			}
		case "busbw":
			if place >= 0 && place < 2 {
				c.busbw[place] = i
			}
		case "#wrong", "wrong":
			// Old versions print the maximum error ("error") as a
			// float instead; small nonzero values are normal there, so
			// only the count of wrong values is checked.
			if place >= 0 && place < 2 {
				c.wrong[place] = i
			}
		}
	}
	for p := 0; p <= place && p < 2; p++ {
		if c.algbw[p] < 0 || c.busbw[p] < 0 {
			return nil, fmt.Errorf("column header lacks algbw/busbw after time column %d", p+1)
		}
	}
	if place < 0 {
		return nil, fmt.Errorf("column header has no time column")
	}
	return c, nil
}

func isInt(s string) bool {
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}
