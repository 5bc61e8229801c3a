package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/stats"
)

// maxRawRows bounds the raw runs shown of each side (the latest).
const maxRawRows = 100

// OneCulprit reports whether the finding names a single culprit: its two
// sides are then the culprit's parent and the culprit itself.
func (v *view) OneCulprit() bool {
	return v.Outcome == record.OutcomeCulprit && len(v.Culprits) == 1
}

// GoodName and BadName name the two sides of the summary: the parent and
// the culprit, or the good and the bad end of the range.
func (v *view) GoodName() string {
	if v.OneCulprit() {
		return "parent"
	}
	return "good"
}

// BadName: see GoodName.
func (v *view) BadName() string {
	if v.OneCulprit() {
		return "culprit"
	}
	return "bad"
}

// RangeText is the bisected range as "`a`..`b`" from the probes marked as
// its ends, or "" when they are not known.
func (v *view) RangeText() string {
	var ends []record.Commit
	for _, p := range v.Probes {
		if p.Verdict == "end" {
			ends = append(ends, p.Commit)
		}
	}
	if len(ends) != 2 {
		return ""
	}
	if ends[1].Date.Before(ends[0].Date) {
		ends[0], ends[1] = ends[1], ends[0]
	}
	return v.Link(ends[0]) + ".." + v.Link(ends[1])
}

// HistoryPoints says what the sparkline's points are.
func (v *view) HistoryPoints() string {
	switch {
	case v.HistoryOf == record.HistoryNights:
		return "nights"
	case v.Outcome == record.OutcomeCulprit:
		return "measured commits around the culprit (the median of each)"
	}
	return "measured commits of the range (the median of each)"
}

// LoadText summarizes the host's 1-minute load average before the runs of
// one side, or "" when no run recorded it.
func (v *view) LoadText(e record.End) string {
	var loads []float64
	for _, r := range e.Runs {
		if f := strings.Fields(r.LoadAvg); len(f) > 0 {
			if x, err := strconv.ParseFloat(f[0], 64); err == nil {
				loads = append(loads, x)
			}
		}
	}
	if len(loads) == 0 {
		return ""
	}
	return fmt.Sprintf("median %s, %s to %s over %d runs", formatNum(stats.Median(loads)), formatNum(slices.Min(loads)), formatNum(slices.Max(loads)), len(loads))
}

// HasHost reports whether either side recorded the host's load or the
// benchmark's CPU affinity.
func (v *view) HasHost() bool {
	return v.LoadText(v.Good) != "" || v.LoadText(v.Bad) != "" || v.Good.CPUAffinity != "" || v.Bad.CPUAffinity != ""
}

// rawRow is one run in the raw runs table.
type rawRow struct {
	Side, Started, Host, Value, Load string
	N                                int
}

// RawRuns are the latest runs of both sides, at most maxRawRows a side.
func (v *view) RawRuns() []rawRow {
	var rows []rawRow
	for _, side := range []struct {
		name string
		e    record.End
	}{{v.GoodName(), v.Good}, {v.BadName(), v.Bad}} {
		runs := side.e.Runs
		first := max(0, len(runs)-maxRawRows)
		for i, r := range runs[first:] {
			load := "—"
			if r.LoadAvg != "" {
				load = r.LoadAvg
			}
			rows = append(rows, rawRow{Side: side.name, N: first + i + 1, Started: r.Started.UTC().Format("2006-01-02 15:04:05"),
				Host: orDash(r.Host), Value: formatNum(r.Value), Load: load})
		}
	}
	return rows
}

// RawOmitted counts the runs RawRuns leaves out.
func (v *view) RawOmitted() int {
	return max(0, len(v.Good.Runs)-maxRawRows) + max(0, len(v.Bad.Runs)-maxRawRows)
}

// StepsText is the configured build and benchmark steps as a shell loop
// over the two sides' commits.
func (v *view) StepsText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "for rev in %s %s; do  # the %s, then the %s\n", v.Good.Commit.Short(), v.Bad.Commit.Short(), v.sideWord(v.GoodName()), v.sideWord(v.BadName()))
	b.WriteString("  git checkout -q \"$rev\"\n")
	for _, s := range v.Steps {
		b.WriteString("  " + s + "\n")
	}
	b.WriteString("done")
	return b.String()
}

func (v *view) sideWord(name string) string {
	if v.OneCulprit() {
		return name
	}
	return name + " end"
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
