package views

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/perfbot/perfbot/detect"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/stats"
	"github.com/perfbot/perfbot/store"
)

// The read models of the dashboard: what a person sees of the service,
// computed from the store alone.

// Dashboard is the front page: each metric over the nights, the jobs, the
// findings and how precise perfbot's alerts have been.
type Dashboard struct {
	Repo      string         `json:"repo"`
	Branch    string         `json:"branch"`
	Nights    int            `json:"nights"`
	LastNight time.Time      `json:"last_night"`
	Reference string         `json:"reference,omitempty"`
	Series    []MetricSeries `json:"series"`
	Jobs      []JobSummary   `json:"jobs"`
	Findings  []FindingRow   `json:"findings"`
	Precision Precision      `json:"precision"`
}

// MetricSeries is one metric over the nights, oldest first, with the
// change points the nightly cycles raised alerts for and the findings
// localized in it.
type MetricSeries struct {
	Metric  record.Metric `json:"metric"`
	Points  []NightPoint  `json:"points"`
	Changes []ChangePoint `json:"changes"`
	Marks   []FindingMark `json:"marks"`
}

// NightPoint is one night's value of a metric: the value detection reads
// (detect.Value) with its interval, and the tip it was measured at.
type NightPoint struct {
	Night   uint64    `json:"night"`
	Time    time.Time `json:"time"`
	Commit  string    `json:"commit"`
	Subject string    `json:"subject,omitempty"`
	Value   float64   `json:"value"`
	Lo      float64   `json:"lo"`
	Hi      float64   `json:"hi"`
	N       int       `json:"n"`
}

// ChangePoint is a change the nightly cycles raised an alert for, at its
// first night at the new level, with what they decided about it (act or
// noted) and what its job found (confirmed, refuted, or nothing yet).
type ChangePoint struct {
	Night     uint64              `json:"night"`
	Direction record.Direction    `json:"direction"`
	DeltaPct  float64             `json:"delta_pct"`
	Good      string              `json:"good"`
	Bad       string              `json:"bad"`
	Decision  record.Decision     `json:"decision,omitempty"`
	Outcome   record.AlertOutcome `json:"outcome,omitempty"`
}

// FindingMark places a finding on a chart: the first night whose tip held
// its culprit.
type FindingMark struct {
	Night     uint64           `json:"night"`
	Finding   string           `json:"finding"`
	Culprit   string           `json:"culprit"`
	Direction record.Direction `json:"direction"`
	DeltaPct  float64          `json:"delta_pct"`
	Triage    record.Triage    `json:"triage"`
}

// FindingRow is a finding as the dashboard lists it.
type FindingRow struct {
	record.Finding
	TriageState record.Triage `json:"triage_state"`
}

// JobSummary is a job with its progress: how many trace lines it wrote
// and the last of them.
type JobSummary struct {
	store.Job
	Lines int             `json:"lines"`
	Last  store.TraceLine `json:"last"`
}

// Precision counts the findings by triage state. Its Rate is the share of
// the triaged findings that were not false alarms.
type Precision struct {
	All          int `json:"all"`
	Untriaged    int `json:"untriaged"`
	Acknowledged int `json:"acknowledged"`
	Invalid      int `json:"invalid"`
	Fixed        int `json:"fixed"`
}

// Triaged is the number of findings a person has decided on.
func (p Precision) Triaged() int { return p.All - p.Untriaged }

// Rate is 1 − invalid/triaged, and false before anything was triaged.
func (p Precision) Rate() (float64, bool) {
	if p.Triaged() == 0 {
		return 0, false
	}
	return 1 - float64(p.Invalid)/float64(p.Triaged()), true
}

func (p *Precision) add(t record.Triage) {
	p.All++
	switch t {
	case record.TriageAcknowledged:
		p.Acknowledged++
	case record.TriageInvalid:
		p.Invalid++
	case record.TriageFixed:
		p.Fixed++
	default:
		p.Untriaged++
	}
}

// Dashboard returns the front page's read model. The charts show every
// recorded night, those whose tip a force-push took off the branch
// included (the store alone does not know the branch), and the change
// points the nightly cycles raised alerts for, as they decided them.
func (b *Views) Dashboard(ctx context.Context) (*Dashboard, error) {
	nights, err := b.Store.Nights()
	if err != nil {
		return nil, fmt.Errorf("dashboard: nights: %w", err)
	}
	state, err := b.Store.NightlyState()
	if err != nil {
		return nil, fmt.Errorf("dashboard: nightly state: %w", err)
	}
	fs, err := b.ListFindings(ctx)
	if err != nil {
		return nil, err
	}
	jobs, err := b.JobSummaries(ctx)
	if err != nil {
		return nil, err
	}
	d := &Dashboard{Repo: b.Config.Repo.URL, Branch: b.Config.Repo.Branch, Nights: len(nights), Reference: state.Reference, Jobs: jobs,
		Findings: make([]FindingRow, 0, len(fs)), Series: []MetricSeries{}}
	if len(nights) > 0 {
		d.LastNight = nights[len(nights)-1].Time
	}
	for _, f := range fs {
		d.Findings = append(d.Findings, FindingRow{Finding: f, TriageState: f.TriageState()})
		d.Precision.add(f.TriageState())
	}
	subjects := map[string]string{}
	for _, m := range b.Config.Metrics {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d.Series = append(d.Series, b.metricSeries(m, nights, state.Alerts, fs, subjects))
	}
	return d, nil
}

func (b *Views) metricSeries(m record.Metric, nights []record.Night, alerts map[string]record.Alert, fs []record.Finding, subjects map[string]string) MetricSeries {
	ms := MetricSeries{Metric: m, Points: []NightPoint{}, Changes: []ChangePoint{}, Marks: []FindingMark{}}
	for i, p := range detect.Tips(nights, m.Name) {
		v, lo, hi, ok := detect.Value(p)
		if !ok {
			continue
		}
		n := nights[i]
		ms.Points = append(ms.Points, NightPoint{Night: n.Seq, Time: n.Time, Commit: n.Tip, Subject: b.subject(n.Tip, subjects),
			Value: v, Lo: lo, Hi: hi, N: len(p.Values)})
	}
	for _, a := range alerts {
		if a.Metric != m.Name || a.Decision != record.DecisionAct && a.Decision != record.DecisionNoted {
			continue
		}
		ms.Changes = append(ms.Changes, ChangePoint{Night: a.Night, Direction: a.Direction, DeltaPct: a.DeltaPct, Good: a.Good, Bad: a.Bad,
			Decision: a.Decision, Outcome: a.Outcome})
	}
	slices.SortFunc(ms.Changes, func(x, y ChangePoint) int {
		return cmp.Or(cmp.Compare(x.Night, y.Night), strings.Compare(x.Good+x.Bad, y.Good+y.Bad))
	})
	for _, f := range fs {
		if f.Metric != m.Name || len(f.Culprits) == 0 {
			continue
		}
		c := f.Culprits[0]
		if i := record.FirstNightWith(nights, c.Commit.Hash); i >= 0 {
			ms.Marks = append(ms.Marks, FindingMark{Night: nights[i].Seq, Finding: f.ID, Culprit: c.Commit.Hash, Direction: f.Direction,
				DeltaPct: c.Effect.Pct, Triage: f.TriageState()})
		}
	}
	return ms
}

func (b *Views) subject(hash string, cache map[string]string) string {
	s, ok := cache[hash]
	if !ok {
		if c, found, err := b.Store.Commit(hash); err == nil && found {
			s = c.Subject
		}
		cache[hash] = s
	}
	return s
}

// JobSummaries lists every job, newest first, each with its progress.
func (b *Views) JobSummaries(ctx context.Context) ([]JobSummary, error) {
	jobs, err := b.Store.Jobs()
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	out := make([]JobSummary, 0, len(jobs))
	for _, j := range jobs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tr, err := b.Store.Trace(j.ID)
		if err != nil {
			return nil, fmt.Errorf("trace of %s: %w", j.ID, err)
		}
		s := JobSummary{Job: j, Lines: len(tr)}
		if len(tr) > 0 {
			s.Last = tr[len(tr)-1]
		}
		out = append(out, s)
	}
	return out, nil
}

// CommitView is one commit with what perfbot measured of it.
type CommitView struct {
	Commit record.Commit `json:"commit"`
	// Metrics summarizes each configured metric over the commit's ok
	// runs (of the commit as it is, without hunks or overrides).
	Metrics []CommitMetric `json:"metrics"`
	// Runs are its runs, newest first, without logs.
	Runs []record.Run `json:"runs"`
	// Fingerprint is that of its newest ok run, when it has one.
	Fingerprint *record.Fingerprint `json:"fingerprint,omitempty"`
	// Nights are the nights whose tip it was.
	Nights []uint64 `json:"nights,omitempty"`
	// Findings are the ids of the findings that name it (culprit or end).
	Findings []string `json:"findings,omitempty"`
}

// CommitMetric is a metric over a commit's runs: its median with the
// interval of stats.Summarize at 95%, and the values.
type CommitMetric struct {
	record.MetricSummary
	Better string    `json:"better"`
	Values []float64 `json:"values"`
}

// Commit returns the commit named by its hash or a unique prefix of it
// with its runs. A name the store knows no commit by is an *record.InputError.
func (b *Views) Commit(ctx context.Context, rev string) (*CommitView, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c, ok, err := b.Store.FindCommit(rev)
	switch {
	case errors.Is(err, store.ErrAmbiguous):
		return nil, &record.InputError{Err: err}
	case err != nil:
		return nil, err
	case !ok:
		return nil, &record.InputError{Err: fmt.Errorf("commit %q: not in the store (perfbot knows the commits it measured)", rev)}
	}
	runs, err := b.Store.Runs(store.RunFilter{Commit: c.Hash})
	if err != nil {
		return nil, fmt.Errorf("runs of %s: %w", record.ShortHash(c.Hash), err)
	}
	v := &CommitView{Commit: c, Runs: make([]record.Run, 0, len(runs))}
	values := map[string][]float64{}
	for _, r := range runs {
		plain := len(r.Target.Hunks) == 0 && len(r.Target.Env) == 0
		if r.Status == record.StatusOK && plain {
			for m, x := range r.Values {
				values[m] = append(values[m], x)
			}
			if v.Fingerprint == nil {
				fp := r.Fingerprint
				v.Fingerprint = &fp
			}
		}
		r.Logs = nil
		v.Runs = append(v.Runs, r)
	}
	for _, m := range b.Config.Metrics {
		vs := values[m.Name]
		ms := CommitMetric{MetricSummary: record.MetricSummary{Metric: m.Name, Unit: m.Unit, N: len(vs)}, Better: string(m.Better), Values: vs}
		if len(vs) > 0 {
			s := stats.Summarize(vs, 0.95)
			ms.Median, ms.Lo, ms.Hi = s.Median, s.Lo, s.Hi
		}
		v.Metrics = append(v.Metrics, ms)
	}
	nights, err := b.Store.Nights()
	if err != nil {
		return nil, err
	}
	for _, n := range nights {
		if n.Tip == c.Hash {
			v.Nights = append(v.Nights, n.Seq)
		}
	}
	fs, err := b.Store.Findings()
	if err != nil {
		return nil, err
	}
	for _, f := range fs {
		if names(&f, c.Hash) {
			v.Findings = append(v.Findings, f.ID)
		}
	}
	return v, nil
}

func names(f *record.Finding, hash string) bool {
	if f.Good.Commit.Hash == hash || f.Bad.Commit.Hash == hash {
		return true
	}
	for _, c := range f.Culprits {
		if c.Commit.Hash == hash {
			return true
		}
	}
	return false
}

// Comparison sets two commits side by side: each metric's effect from A
// to B with its interval (stats.Delta at 95%), and the fingerprint
// differences of their newest runs.
type Comparison struct {
	A       *CommitView      `json:"a"`
	B       *CommitView      `json:"b"`
	Metrics []MetricDelta    `json:"metrics"`
	Env     []record.EnvDiff `json:"env"`
}

// MetricDelta is one metric's change from A to B, in percent of A.
type MetricDelta struct {
	Metric   string  `json:"metric"`
	Unit     string  `json:"unit"`
	Better   string  `json:"better"`
	A        float64 `json:"a"`
	B        float64 `json:"b"`
	DeltaPct float64 `json:"delta_pct"`
	LoPct    float64 `json:"lo_pct"`
	HiPct    float64 `json:"hi_pct"`
	// Verdict is better, worse or same (the interval holds zero), or
	// unknown without runs on both sides.
	Verdict string `json:"verdict"`
}

// Compare compares commit a with commit b.
func (b *Views) Compare(ctx context.Context, a, bRev string) (*Comparison, error) {
	va, err := b.Commit(ctx, a)
	if err != nil {
		return nil, err
	}
	vb, err := b.Commit(ctx, bRev)
	if err != nil {
		return nil, err
	}
	cmp := &Comparison{A: va, B: vb, Env: []record.EnvDiff{}}
	for i, ma := range va.Metrics {
		mb := vb.Metrics[i]
		d := MetricDelta{Metric: ma.Metric, Unit: ma.Unit, Better: ma.Better, A: ma.Median, B: mb.Median, Verdict: "unknown"}
		if ma.N > 0 && mb.N > 0 {
			e := stats.Delta(ma.Values, mb.Values, 0.95)
			d.DeltaPct, d.LoPct, d.HiPct = e.Pct, e.Lo, e.Hi
			d.Verdict = verdict(d, record.Better(ma.Better))
		}
		cmp.Metrics = append(cmp.Metrics, d)
	}
	if va.Fingerprint != nil && vb.Fingerprint != nil {
		cmp.Env = envDiffs(*va.Fingerprint, *vb.Fingerprint)
	}
	return cmp, nil
}

func verdict(d MetricDelta, better record.Better) string {
	switch {
	case d.LoPct <= 0 && d.HiPct >= 0:
		return "same"
	case (d.DeltaPct > 0) == (better != record.Lower):
		return "better"
	}
	return "worse"
}

// envDiffs lists what differs between two fingerprints: the variables,
// then the host facts in parentheses.
func envDiffs(a, b record.Fingerprint) []record.EnvDiff {
	var diffs []record.EnvDiff
	keys := maps.Clone(a.Env)
	if keys == nil {
		keys = map[string]string{}
	}
	maps.Copy(keys, b.Env)
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if a.Env[k] != b.Env[k] {
			diffs = append(diffs, record.EnvDiff{Name: k, Good: a.Env[k], Bad: b.Env[k]})
		}
	}
	for _, d := range []struct{ name, a, b string }{
		{"host", a.Host, b.Host}, {"cpu", a.CPUModel, b.CPUModel}, {"go", a.GoVersion, b.GoVersion}, {"kernel", a.Kernel, b.Kernel},
	} {
		if d.a != d.b {
			diffs = append(diffs, record.EnvDiff{Name: "(" + d.name + ")", Good: d.a, Bad: d.b})
		}
	}
	if diffs == nil {
		diffs = []record.EnvDiff{}
	}
	return diffs
}
