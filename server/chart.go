package server

import (
	"fmt"
	"html/template"
	"math"
	"strings"

	"github.com/perfbot/perfbot/internal/num"
	"github.com/perfbot/perfbot/views"

	"github.com/perfbot/perfbot/record"
)

// The chart of one metric over the nights, drawn as SVG on the server so
// that the dashboard needs nothing from the internet: each night's value
// with its interval as a vertical bar, the line through the values, the
// change points detection placed (dashed, red for a regression, green for
// an improvement) and the findings (diamonds above the plot, coloured by
// triage state, linked to the finding). Every point links to its commit's
// page and carries a <title> tooltip: night, date, commit, subject, value
// and interval.

const (
	chartW, chartH                       = 960, 270
	padLeft, padRight, padTop, padBottom = 64, 20, 34, 40
	plotW, plotH                         = chartW - padLeft - padRight, chartH - padTop - padBottom
	pointRadius                          = 3.5
	markSize                             = 6
)

func renderChart(ms views.MetricSeries, l linker) template.HTML {
	var b strings.Builder
	label := fmt.Sprintf("%s over %d nights", ms.Metric.Name, len(ms.Points))
	fmt.Fprintf(&b, `<svg class="chart" data-metric="%s" viewBox="0 0 %d %d" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg">`,
		esc(ms.Metric.Name), chartW, chartH, esc(label))
	if len(ms.Points) == 0 {
		fmt.Fprintf(&b, `<text class="empty" x="%d" y="%d">no nights measured %s yet</text></svg>`, chartW/2, chartH/2, esc(ms.Metric.Name))
		return template.HTML(b.String())
	}
	first, last := ms.Points[0].Night, ms.Points[len(ms.Points)-1].Night
	x := func(night uint64) float64 {
		if last == first {
			return padLeft + plotW/2
		}
		return padLeft + float64(night-first)/float64(last-first)*plotW
	}
	lo, hi := valueRange(ms.Points)
	ticks := niceTicks(lo, hi, 5)
	lo, hi = math.Min(lo, ticks[0]), math.Max(hi, ticks[len(ticks)-1])
	if hi == lo {
		lo, hi = lo*0.99, hi*1.01+1e-9
	}
	// An interval that reaches past the plot is clipped to it.
	y := func(v float64) float64 { return padTop + (hi-math.Max(lo, math.Min(hi, v)))/(hi-lo)*plotH }

	// Grid and axes.
	b.WriteString(`<g class="grid">`)
	for _, t := range ticks {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f"/>`, padLeft, chartW-padRight, y(t), y(t))
		fmt.Fprintf(&b, `<text class="ytick" x="%d" y="%.1f">%s</text>`, padLeft-8, y(t)+4, fmtValue(t))
	}
	b.WriteString(`</g>`)
	fmt.Fprintf(&b, `<text class="unit" x="%d" y="%d">%s (%s is better)</text>`, padLeft, padTop-20, esc(ms.Metric.Unit), esc(better(ms.Metric.Better)))
	b.WriteString(`<g class="xaxis">`)
	step := max(1, (len(ms.Points)+7)/8)
	for i, p := range ms.Points {
		if i%step != 0 && i != len(ms.Points)-1 {
			continue
		}
		if i != len(ms.Points)-1 && len(ms.Points)-1-i < step/2+1 && i != 0 {
			continue // leave room for the last label
		}
		// The first and last labels keep inside the chart.
		anchor := "middle"
		switch i {
		case 0:
			anchor = "start"
		case len(ms.Points) - 1:
			anchor = "end"
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="%s">night %d</text><text class="date" x="%.1f" y="%d" text-anchor="%s">%s</text>`,
			x(p.Night), chartH-padBottom+16, anchor, p.Night, x(p.Night), chartH-padBottom+30, anchor, p.Time.Format("Jan 2"))
	}
	b.WriteString(`</g>`)

	// Change points behind the data.
	// A label close to the one before it goes a row lower.
	lastLabel, row := math.Inf(-1), 0
	for _, c := range ms.Changes {
		cx := x(c.Night)
		if cx-lastLabel < 56 {
			row = (row + 1) % 3
		} else {
			row = 0
		}
		lastLabel = cx
		fmt.Fprintf(&b, `<a class="change %s" href="%s"><line x1="%.1f" x2="%.1f" y1="%d" y2="%d"/><text x="%.1f" y="%d">%+.1f%%</text>`+
			`<title>change point at night %d: %s %+.1f%% (first night at the new level); compare %s → %s</title></a>`,
			esc(string(c.Direction)), esc(l.Compare(c.Good, c.Bad)), cx, cx, padTop, chartH-padBottom, cx+4, padTop+12+14*row, c.DeltaPct,
			c.Night, esc(string(c.Direction)), c.DeltaPct, record.ShortHash(c.Good), record.ShortHash(c.Bad))
	}

	// The line, then each point with its interval.
	pts := make([]string, len(ms.Points))
	for i, p := range ms.Points {
		pts[i] = fmt.Sprintf("%.1f,%.1f", x(p.Night), y(p.Value))
	}
	fmt.Fprintf(&b, `<polyline class="line" points="%s"/>`, strings.Join(pts, " "))
	for _, p := range ms.Points {
		px := x(p.Night)
		subject := p.Subject
		if subject == "" {
			subject = "(subject unknown)"
		}
		tip := fmt.Sprintf("night %d · %s\n%s %s\n%s %s [%s, %s], %d runs", p.Night, p.Time.Format("2006-01-02"),
			record.ShortHash(p.Commit), subject, fmtValue(p.Value), ms.Metric.Unit, fmtValue(p.Lo), fmtValue(p.Hi), p.N)
		fmt.Fprintf(&b, `<a class="point" href="%s" data-night="%d" data-commit="%s" data-value="%s">`+
			`<line class="ci" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/><circle cx="%.1f" cy="%.1f" r="%.1f"/><title>%s</title></a>`,
			esc(l.Commit(p.Commit)), p.Night, esc(p.Commit), fmtValue(p.Value),
			px, px, y(p.Lo), y(p.Hi), px, y(p.Value), pointRadius, esc(tip))
	}

	// Findings above the plot.
	for _, m := range ms.Marks {
		mx, my := x(m.Night), float64(padTop-8)
		fmt.Fprintf(&b, `<a class="finding-mark triage-%s" href="%s" data-finding="%s"><path d="M%.1f %.1fl%d %dl%d %dl%d %dz"/>`+
			`<title>finding %s: %s %+.1f%% at %s (%s)</title></a>`,
			esc(string(m.Triage)), esc(l.Finding(m.Finding)), esc(m.Finding),
			mx, my-markSize, markSize, markSize, -markSize, markSize, -markSize, -markSize,
			esc(m.Finding), esc(string(m.Direction)), m.DeltaPct, record.ShortHash(m.Culprit), esc(string(m.Triage)))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// valueRange is the span of values the chart shows: the nights' values
// with room around them for their intervals, but not all of a wide
// interval (a noisy host's runs spread far wider than its nights'
// values), so that the values are not squeezed into a thin band.
func valueRange(points []views.NightPoint) (lo, hi float64) {
	vlo, vhi := math.Inf(1), math.Inf(-1)
	ilo, ihi := math.Inf(1), math.Inf(-1)
	for _, p := range points {
		vlo, vhi = math.Min(vlo, p.Value), math.Max(vhi, p.Value)
		ilo, ihi = math.Min(ilo, p.Lo), math.Max(ihi, p.Hi)
	}
	room := 0.6 * (vhi - vlo)
	if room == 0 {
		room = 0.01 * math.Abs(vhi)
	}
	return math.Max(ilo, vlo-room), math.Min(ihi, vhi+room)
}

func better(b record.Better) string {
	if b == record.Lower {
		return "lower"
	}
	return "higher"
}

func esc(s string) string { return template.HTMLEscapeString(s) }

// niceTicks returns about n round values that span [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	if !(hi > lo) {
		return []float64{lo}
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ticks []float64
	for t := math.Floor(lo/step) * step; t <= hi+step*1e-9; t += step {
		ticks = append(ticks, t)
	}
	if ticks[len(ticks)-1] < hi {
		ticks = append(ticks, ticks[len(ticks)-1]+step)
	}
	return ticks
}

// fmtValue prints a metric's value with four significant digits or so.
func fmtValue(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return num.Format(v)
}
