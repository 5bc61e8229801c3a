package service

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/internal/num"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/detect"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/stats"
)

// NightReport is what one nightly cycle did.
type NightReport struct {
	Night record.Night `json:"night"`
	// Alerts are the changes detection saw tonight and what was done
	// about each.
	Alerts []AlertNote `json:"alerts"`
	// Missing lists the findings of metrics without data for too many
	// nights.
	Missing []string `json:"missing,omitempty"`
	// Speculation is the finding of a night on which speculative
	// decoding was slower than plain decoding.
	Speculation string `json:"speculation,omitempty"`
	// Rechecks are the revert jobs enqueued to measure old proofs by
	// revert again on tonight's tip (report.recheck_nights).
	Rechecks []string `json:"rechecks,omitempty"`
	record.Cost
}

// AlertNote is one alert of a night and its fate: the job enqueued for it
// (Job), or why none was (Note).
type AlertNote struct {
	Metric    string           `json:"metric"`
	Direction record.Direction `json:"direction"`
	Good      string           `json:"good"`
	Bad       string           `json:"bad"`
	DeltaPct  float64          `json:"delta_pct"`
	Night     uint64           `json:"night"` // the night the change was first seen
	Job       string           `json:"job,omitempty"`
	Note      string           `json:"note,omitempty"`
	// Unbisected, set on a change only noted (an improvement under
	// detect.improvements: note), is the range its job would have
	// bisected; BisectCommand locates the change in it.
	Unbisected *record.Range `json:"unbisected,omitempty"`

	wideGood, wideBad string // detection's widest range for the change
	earlyGood         string // the tip of the night before wideGood's
	lateBad           string // the tip of wideBad's night
	decision          record.Decision
}

// Nightly runs one scheduled cycle now:
//
//  1. fetch, and find the branch's new first-parent commits since the last
//     night (a force-pushed branch is followed: the nights whose tips left
//     it keep their runs but leave the series detection reads);
//  2. measure the tip interleaved with the reference commit (the accepted
//     baseline), Detect.Repeats runs each, and scale the tip's values by
//     how the reference ran tonight, so that a slower host does not look
//     like a regression;
//  3. record the night, with the state it hands the next one, in one
//     transaction;
//  4. run detection on every metric and enqueue one alert job per new
//     change (Work runs them) once Detect.ConfirmNights later nights
//     agree with it (a change they do not bear out leaves the series): a
//     change whose range already holds a filed culprit is not bisected
//     again, its issue is commented on at most once;
//  5. turn a metric without data for Detect.MissingNights nights into a
//     finding of its own, and so a tip on which speculative decoding is
//     slower than plain decoding (once for a run of such nights).
//
// A tip that does not build is a night of its own (build_failed), not an
// error. The cycle is not resumed: one killed before step 3 leaves no
// night behind and the next cycle measures again.
func (b *Bot) Nightly(ctx context.Context) (*NightReport, error) {
	meter := b.startMeter()
	if err := b.Repo.Fetch(ctx); err != nil {
		return nil, &record.InfraError{Op: "fetch", Err: err}
	}
	branch := b.Config.Repo.Branch
	if branch == "" {
		branch = "HEAD"
	}
	tip, err := b.resolve(ctx, branch)
	if err != nil {
		return nil, fmt.Errorf("nightly: branch %s: %w", branch, err)
	}
	chain, err := b.Repo.FirstParents(ctx, tip.Hash, 0)
	if err != nil {
		return nil, err
	}
	onChain := make(map[string]int, len(chain))
	for i, c := range chain {
		onChain[c.Hash] = i
	}
	nights, err := b.Store.Nights()
	if err != nil {
		return nil, fmt.Errorf("nightly: read nights: %w", err)
	}
	state, err := b.Store.NightlyState()
	if err != nil {
		return nil, fmt.Errorf("nightly: read state: %w", err)
	}

	night := record.Night{Time: b.now(), Branch: branch, Tip: tip.Hash, Reference: state.Reference, Status: record.StatusOK}
	night.New, night.Rewritten = newCommits(nights, chain, onChain)
	if night.Rewritten {
		b.progressf("nightly: %s was rewritten since the last night (force-push or rebase): following its new first-parent chain", branch)
	}
	for _, h := range night.New {
		if c, err := b.Repo.Commit(ctx, h); err == nil {
			_ = b.putCommit(c)
		}
	}
	b.progressf("nightly %s: tip %s, %d new commit(s), reference %s", branch, tip.Short(), len(night.New), orFirst(record.ShortHash(state.Reference)))

	next, err := b.measureNight(ctx, &night, state, nights)
	if err != nil {
		return nil, err
	}
	if err := b.Store.AddNight(&night, next); err != nil {
		return nil, fmt.Errorf("nightly: record night: %w", err)
	}
	nights = append(nights, night)

	rep := &NightReport{Night: night, Alerts: []AlertNote{}}
	series := onChainNights(nights, onChain)
	notes, err := b.detectAll(ctx, series)
	if err != nil {
		return nil, err
	}
	rep.Alerts = append(rep.Alerts, notes...)
	for _, m := range b.Config.Metrics {
		id, err := b.missingFinding(ctx, m, series)
		if err != nil {
			return nil, err
		}
		if id != "" {
			rep.Missing = append(rep.Missing, id)
		}
	}
	if rep.Speculation, err = b.speculationFinding(ctx, series); err != nil {
		return nil, err
	}
	if night.Status == record.StatusOK {
		if rep.Rechecks, err = b.enqueueRechecks(nights, tip.Hash); err != nil {
			return nil, err
		}
	}
	rep.Cost = meter.read()
	return rep, nil
}

func orFirst(short string) string {
	if short == "" {
		return "(none: the first night's tip becomes it)"
	}
	return short
}

// newCommits returns the commits of chain after the newest night whose tip
// is on it, and whether the last night's tip has left the branch.
func newCommits(nights []record.Night, chain []record.Commit, onChain map[string]int) (fresh []string, rewritten bool) {
	from := -1
	for i := len(nights) - 1; i >= 0; i-- {
		if at, ok := onChain[nights[i].Tip]; ok {
			from = at
			break
		}
	}
	if len(nights) > 0 {
		_, ok := onChain[nights[len(nights)-1].Tip]
		rewritten = !ok
	}
	if from < 0 && len(nights) == 0 {
		// The first night: the tip alone is new.
		from = len(chain) - 2
	}
	for _, c := range chain[from+1:] {
		fresh = append(fresh, c.Hash)
	}
	return fresh, rewritten
}

// onChainNights keeps the nights whose tip is on the branch's current
// first-parent chain, in the order they ran.
func onChainNights(nights []record.Night, onChain map[string]int) []record.Night {
	var out []record.Night
	for _, n := range nights {
		if _, ok := onChain[n.Tip]; ok {
			out = append(out, n)
		}
	}
	return out
}

// measureNight measures the tip of night interleaved with the reference,
// and the sampled new commits (detect.sample) in the same rounds, fills in
// their metrics or their failure, and returns the state for the next
// night. The first night, with no reference yet, measures the tip alone:
// it becomes the reference at its own level. A sampled commit that does
// not measure is recorded as such and leaves the rounds; it never fails
// the night.
func (b *Bot) measureNight(ctx context.Context, night *record.Night, state record.NightlyState, past []record.Night) (record.NightlyState, error) {
	repeats := max(b.Config.Detect.Repeats, 1)
	tip := record.Target{Commit: night.Tip}
	ref := record.Target{Commit: state.Reference}
	// A night whose tip is the reference (the branch did not move) still
	// takes its runs in two interleaved halves, so that its value has the
	// noise of every other night's.
	interleave := state.Reference != ""
	var sampled []sampledCommit
	if interleave {
		for _, h := range pickSample(night.New, b.Config.Detect.Sample) {
			sampled = append(sampled, sampledCommit{NightCommit: record.NightCommit{Commit: h, Status: record.StatusOK}, vals: map[string][]float64{}})
		}
	}
	tipVals := map[string][]float64{}
	refVals := map[string][]float64{}
	for i := 0; i < repeats; i++ {
		if interleave {
			v, err := b.nightRun(ctx, "reference", ref, i, repeats)
			if errors.Is(err, record.ErrBroken) {
				// The reference no longer builds (a toolchain change): the tip
				// becomes the reference at tonight's level, and the sampled
				// commits have nothing to be scaled by.
				b.progressf("nightly: reference %s no longer measures (%v); tonight's tip becomes the reference", ref.Short(), err)
				interleave, ref = false, tip
				clear(refVals)
				sampled = nil
				state.Reference, state.Levels = "", nil
				night.Reference = ""
			} else if err != nil {
				return state, err
			} else {
				appendValues(refVals, v)
			}
		}
		for j := range sampled {
			s := &sampled[j]
			if s.Status != record.StatusOK {
				continue
			}
			t := record.Target{Commit: s.Commit}
			v, err := b.nightRun(ctx, "sampled", t, i, repeats)
			if errors.Is(err, record.ErrBroken) {
				s.Status, s.Error = b.lastStatus(t), err.Error()
				b.progressf("nightly: sampled commit %s does not measure: %v", t.Short(), err)
				continue
			}
			if err != nil {
				return state, err
			}
			appendValues(s.vals, v)
		}
		v, err := b.nightRun(ctx, "tip", tip, i, repeats)
		if errors.Is(err, record.ErrBroken) {
			night.Status, night.Error = b.lastStatus(tip), err.Error()
			b.progressf("nightly: tip %s does not measure: %v", tip.Short(), err)
			night.Sampled = b.nightCommits(sampled, refVals, state.Levels, past)
			return state, nil
		}
		if err != nil {
			return state, err
		}
		appendValues(tipVals, v)
	}

	next := state
	if !interleave {
		next.Reference, next.Levels = night.Tip, map[string]float64{}
	}
	night.Metrics = map[string]record.NightMetric{}
	for _, m := range b.Config.Metrics {
		tv := tipVals[m.Name]
		if len(tv) == 0 {
			continue
		}
		if !interleave {
			nm := detect.Alone(tv)
			next.Levels[m.Name] = nm.Level
			night.Metrics[m.Name] = nm
			b.progressf("  %-16s tip median %s, the reference from tonight", m.Name, num.Format(stats.Median(tv)))
			continue
		}
		nm, ok := b.nightMetric(m, tv, refVals[m.Name], state.Levels, past)
		if !ok {
			continue
		}
		night.Metrics[m.Name] = nm
		b.progressf("  %-16s tip median %s, reference %s, scaled %s (reference weight %.2f)", m.Name, num.Format(stats.Median(tv)), num.Format(medianOr(nm.Ref)), num.Format(stats.Median(nm.Values)), nm.RefWeight)
	}
	night.Sampled = b.nightCommits(sampled, refVals, state.Levels, past)
	return next, nil
}

// nightRun takes one fresh run of t, the role's run i (from 0) of
// repeats, and prints its line: a night's runs are never silent.
func (b *Bot) nightRun(ctx context.Context, role string, t record.Target, i, repeats int) (map[string][]float64, error) {
	v, err := b.FreshRuns(ctx, t, 1)
	if err != nil {
		return nil, err
	}
	primary := b.Config.Primary().Name
	vals, ok := v[primary]
	var last float64
	if ok = ok && len(vals) > 0; ok {
		last = vals[len(vals)-1]
	}
	b.progressf("%s", runLine("night", role+" "+t.Short(), i+1, repeats, primary, last, ok))
	return v, nil
}

// sampledCommit is a sampled commit while its night is measured.
type sampledCommit struct {
	record.NightCommit
	vals map[string][]float64
}

// nightMetric is the point of metric m of a commit's runs vals measured
// beside the reference runs ref (detect.Pair); false when the reference
// has no runs or no level for it.
func (b *Bot) nightMetric(m record.Metric, vals, ref []float64, levels map[string]float64, past []record.Night) (record.NightMetric, bool) {
	return detect.Pair(past, m.Name, vals, ref, levels[m.Name], b.detectConfig(m))
}

// nightCommits turns the sampled commits' runs into their records.
func (b *Bot) nightCommits(sampled []sampledCommit, ref map[string][]float64, levels map[string]float64, past []record.Night) []record.NightCommit {
	var out []record.NightCommit
	for _, s := range sampled {
		nc := s.NightCommit
		for _, m := range b.Config.Metrics {
			nm, ok := b.nightMetric(m, s.vals[m.Name], ref[m.Name], levels, past)
			if !ok {
				continue
			}
			if nc.Metrics == nil {
				nc.Metrics = map[string]record.NightMetric{}
			}
			nc.Metrics[m.Name] = nm
		}
		if nc.Status == record.StatusOK && len(nc.Metrics) > 0 {
			b.progressf("  sampled %s: %s", record.ShortHash(nc.Commit), sampledLine(b.Config.Metrics, nc.Metrics))
		}
		out = append(out, nc)
	}
	return out
}

func sampledLine(metrics []record.Metric, vals map[string]record.NightMetric) string {
	var parts []string
	for _, m := range metrics {
		if nm, ok := vals[m.Name]; ok {
			parts = append(parts, m.Name+" "+num.Format(stats.Median(nm.Values)))
		}
	}
	return strings.Join(parts, ", ")
}

// pickSample chooses n of the night's new commits before its tip (the
// last of fresh), evenly spaced: with seven candidates and n = 1 the
// middle one, with n = 2 the third and the fifth. All of them when there
// are no more than n.
func pickSample(fresh []string, n int) []string {
	if n <= 0 || len(fresh) < 2 {
		return nil
	}
	cand := fresh[:len(fresh)-1]
	if len(cand) <= n {
		return slices.Clone(cand)
	}
	out := make([]string, 0, n)
	for k := 1; k <= n; k++ {
		i := k*(len(cand)+1)/(n+1) - 1
		i = min(max(i, 0), len(cand)-1)
		if len(out) > 0 && out[len(out)-1] == cand[i] {
			continue
		}
		out = append(out, cand[i])
	}
	return out
}

func appendValues(dst, src map[string][]float64) {
	for k, v := range src {
		dst[k] = append(dst[k], v...)
	}
}

func medianOr(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	return stats.Median(vs)
}

// detectConfig is the detection of one metric as configured.
func (b *Bot) detectConfig(m record.Metric) detect.Config {
	return detect.Config{
		Better:           m.Better,
		MinEffect:        b.Config.Detect.MinEffectOf(m.Name),
		MissingNights:    b.Config.Detect.MissingNights,
		Warmup:           b.Config.Detect.Warmup,
		ConfirmNights:    b.Config.Detect.ConfirmNights,
		NoteImprovements: b.Config.Detect.Improvements == config.ImprovementsNote,
		Best:             b.Config.Detect.Estimator == config.EstimatorBest,
	}
}

// detectAll asks detection what every metric's nights say (detect.Watch),
// acts on the new alerts it decides to act on, and records what it
// decided in the nightly state. Alerts of several metrics over the same
// two nights and in the same direction are one change (a communicator
// change moves the allreduce, the decode and the verify step at once): it
// gets one job, which follows the primary metric when it is among them,
// else the metric that moved most beyond its threshold.
func (b *Bot) detectAll(ctx context.Context, nights []record.Night) ([]AlertNote, error) {
	state, err := b.Store.NightlyState()
	if err != nil {
		return nil, err
	}
	primary := b.Config.Primary().Name
	tonight := nights[len(nights)-1].Seq
	var notes []AlertNote
	var transient []AlertNote    // new alerts whose later nights went back
	groups := map[string][]int{} // range key → indexes into notes
	var order []string
	for _, m := range b.Config.Metrics {
		if m.Quiet {
			continue // evidence only (alert: false)
		}
		calls, err := detect.Watch{Metric: m.Name, Config: b.detectConfig(m), Nights: nights, Decided: state.Alerts}.Decide()
		if err != nil {
			return nil, err
		}
		for _, c := range calls {
			note := AlertNote{Metric: m.Name, Direction: c.Direction, Good: c.Good, Bad: c.Bad, DeltaPct: c.DeltaPct, Night: nights[c.ChangeNight].Seq,
				wideGood: c.WideGood, wideBad: c.WideBad, earlyGood: c.EarlyGood, lateBad: c.LateBad, decision: c.Decision}
			switch {
			case c.Earlier != nil:
				if c.Tonight && (c.Decision == record.DecisionAct || c.Decision == record.DecisionNoted) {
					note.Job, note.Note = c.Earlier.Job, "acted on before"
					notes = append(notes, note)
				}
			case c.Decision == record.DecisionWait:
				note.Note = "held until a later night agrees (detect.confirm_nights)"
				b.sayAlert(note)
				notes = append(notes, note)
			case c.Decision == record.DecisionTransient:
				note.Note = "did not hold: the nights after it are back at the old level, so its first night leaves the series"
				transient = append(transient, note)
			default:
				key := string(c.Direction) + "|" + c.Good + ".." + c.Bad
				if _, ok := groups[key]; !ok {
					order = append(order, key)
				}
				groups[key] = append(groups[key], len(notes))
				notes = append(notes, note)
			}
		}
	}
	if len(transient) > 0 {
		if err := b.recordAlerts(transient, tonight); err != nil {
			return nil, err
		}
		for _, a := range transient {
			b.sayAlert(a)
		}
		notes = append(notes, transient...)
	}
	for _, key := range order {
		idx := groups[key]
		lead := idx[0]
		for _, i := range idx[1:] {
			if notes[lead].Metric == primary {
				break
			}
			if notes[i].Metric == primary || math.Abs(notes[i].DeltaPct) > math.Abs(notes[lead].DeltaPct) {
				lead = i
			}
		}
		act, err := b.actOn(ctx, notes[lead], tonight)
		if err != nil {
			return nil, err
		}
		group := make([]AlertNote, 0, len(idx))
		for _, i := range idx {
			notes[i].Job, notes[i].Note = act.job, act.note
			switch {
			case i == lead:
				notes[i].Unbisected = act.unbisected
			case act.job != "" || act.unbisected != nil:
				notes[i].Note = "same change as " + notes[lead].Metric
			}
			group = append(group, notes[i])
		}
		if err := b.recordAlerts(group, tonight); err != nil {
			return nil, err
		}
		for _, i := range idx {
			b.sayAlert(notes[i])
		}
	}
	return notes, nil
}

// recordAlerts records in the nightly state what night decided about the
// alerts of notes, so that a later night does not decide again.
func (b *Bot) recordAlerts(notes []AlertNote, night uint64) error {
	return b.Store.UpdateNightlyState(func(s *record.NightlyState) error {
		if s.Alerts == nil {
			s.Alerts = map[string]record.Alert{}
		}
		for _, a := range notes {
			r := record.Alert{Metric: a.Metric, Direction: a.Direction, Good: a.Good, Bad: a.Bad, DeltaPct: a.DeltaPct,
				Night: a.Night, Decided: night, Decision: a.decision, Job: a.Job, Note: a.Note, Unbisected: a.Unbisected}
			s.Alerts[r.Key()] = r
		}
		return nil
	})
}

// recordOutcome records on the alerts that alert job req was enqueued for
// what its bisection found: refuted when the ends did not differ
// (not_reproduced) or could not be told apart (inconclusive), so that the
// nights leave the change's first point out; confirmed otherwise.
func (b *Bot) recordOutcome(req AlertRequest, verdict record.Outcome) error {
	id, _, err := jobID(record.JobAlert, req)
	if err != nil {
		return err
	}
	outcome := record.AlertConfirmed
	if verdict == record.OutcomeNotReproduced || verdict == record.OutcomeInconclusive {
		outcome = record.AlertRefuted
	}
	return b.Store.SetAlertOutcome(id, outcome)
}

// sayAlert reports on stderr what the night did with an alert.
func (b *Bot) sayAlert(a AlertNote) {
	b.progressf("nightly: %s %s %+.1f%% between %s and %s (first seen night %d): %s%s", a.Metric, a.Direction, a.DeltaPct, record.ShortHash(a.Good), record.ShortHash(a.Bad), a.Night, a.Job, prefixed(a.Job, a.Note))
	if cmd := a.BisectCommand(); cmd != "" {
		b.progressf("nightly: to locate it: %s", cmd)
	}
}

func prefixed(job, note string) string {
	if job != "" && note != "" {
		return "; " + note
	}
	return note
}

// BisectCommand is the perfbot bisect command that locates a noted
// change, or "" for an alert that was acted on.
func (a AlertNote) BisectCommand() string {
	if a.Unbisected == nil {
		return ""
	}
	return fmt.Sprintf("perfbot bisect --good %s --bad %s --metric %s --direction %s",
		record.ShortHash(a.Unbisected.Good), record.ShortHash(a.Unbisected.Bad), a.Metric, a.Direction)
}

// action is what a night did with one new alert: the job it enqueued,
// or a note saying why none was, and for an improvement only noted, the
// range its job would have bisected.
type action struct {
	job, note  string
	unbisected *record.Range
}

// actOn acts on one new alert: it enqueues the job that bisects it, or
// says why none is needed.
func (b *Bot) actOn(ctx context.Context, a AlertNote, night uint64) (action, error) {
	good, bad := a.Good, a.Bad
	if good == bad && a.wideGood != "" && a.wideBad != "" {
		// The likeliest night has the commit of the night before it (a
		// quiet night), but the nights the change may lie on do not.
		good, bad = a.wideGood, a.wideBad
	}
	if good == bad || good == "" {
		return action{note: "no commit between the two nights: the host, not the code, changed"}, nil
	}
	filed, err := b.filedInRange(ctx, good, bad)
	if err != nil {
		return action{}, err
	}
	if filed != nil {
		note, err := b.noteSeenAgain(ctx, filed, a.Metric, night)
		return action{note: note}, err
	}
	wideGood := a.wideGood
	if a.earlyGood != "" && wideGood != "" {
		// The range starts a night earlier still: a night whose tip
		// already carries the change can land at the old level (this
		// host's builds do), which places the change a night late, and
		// one more night costs the bisection about one probe.
		wideGood = a.earlyGood
	}
	wideBad := a.wideBad
	if a.lateBad != "" && wideBad != "" {
		// And it ends at the tip of the last night the change may lie
		// on: a commit that night sampled before the change's can show
		// it by the chance of its few runs, which places the change a
		// commit early.
		wideBad = a.lateBad
	}
	if a.decision == record.DecisionNoted {
		from, to := a.Good, a.Bad
		if wideGood != "" && wideBad != "" {
			from, to = wideGood, wideBad
		}
		return action{note: "an improvement: noted, not bisected (detect.improvements: note)", unbisected: &record.Range{Good: from, Bad: to}}, nil
	}
	id, err := b.Enqueue(record.JobAlert, AlertRequest{Metric: a.Metric, Direction: a.Direction, Good: a.Good, Bad: a.Bad, Night: a.Night, DeltaPct: a.DeltaPct,
		WideGood: wideGood, WideBad: wideBad})
	return action{job: id}, err
}

// filedInRange returns a filed finding whose culprit lies in good..bad
// (bad included), or nil.
func (b *Bot) filedInRange(ctx context.Context, good, bad string) (*record.Finding, error) {
	chain, err := b.Repo.Chain(ctx, good, bad)
	if err != nil {
		return nil, nil // not one first-parent range: nothing to match against
	}
	in := map[string]bool{}
	for _, c := range chain[1:] {
		in[c.Hash] = true
	}
	fs, err := b.Store.Findings()
	if err != nil {
		return nil, err
	}
	for i := range fs {
		if fs[i].State != record.StateFiled {
			continue
		}
		for _, c := range fs[i].Culprits {
			if in[c.Commit.Hash] {
				return &fs[i], nil
			}
		}
	}
	return nil, nil
}

// noteSeenAgain comments once on the issue of a filed finding that a later
// night saw again.
func (b *Bot) noteSeenAgain(ctx context.Context, f *record.Finding, metric string, night uint64) (string, error) {
	state, err := b.Store.NightlyState()
	if err != nil {
		return "", err
	}
	if _, done := state.Noted[f.ID]; done {
		return fmt.Sprintf("already filed as issue #%d (commented on before)", f.Issue), nil
	}
	tracker, err := b.tracker()
	if err != nil {
		return "", err
	}
	body := fmt.Sprintf("perfbot's nightly cycle %d saw this change again on %s; it is not bisected again.", night, metric)
	if err := tracker.Comment(ctx, f.Issue, body); err != nil {
		return "", fmt.Errorf("comment on issue #%d: %w", f.Issue, err)
	}
	err = b.Store.UpdateNightlyState(func(s *record.NightlyState) error {
		if s.Noted == nil {
			s.Noted = map[string]uint64{}
		}
		s.Noted[f.ID] = night
		return nil
	})
	return fmt.Sprintf("already filed as issue #%d: commented", f.Issue), err
}

// missingFinding files a finding for a metric that has had no value for
// Detect.MissingNights nights in a row: "build broken since <tip>" when
// the tips did not measure at all, "missing data" when they did but
// without this metric. Its id depends on the first tip without data, so a
// later night that still has none files nothing again. It returns the
// finding's id, or "" when the metric has data.
func (b *Bot) missingFinding(ctx context.Context, m record.Metric, nights []record.Night) (string, error) {
	count, since := detect.Missing(detect.Tips(nights, m.Name))
	if count < max(b.Config.Detect.MissingNights, 1) || since < 0 {
		return "", nil
	}
	commit := func(h string) record.Commit {
		c, err := b.Repo.Commit(ctx, h)
		if err != nil {
			return record.Commit{Hash: h}
		}
		return c
	}
	f := &record.Finding{
		Created: b.now(), Repo: b.Config.Repo.URL, Metric: m.Name, Unit: m.Unit,
		Direction: record.Regression, Outcome: record.OutcomeMissingData, Confidence: 1,
		State: record.StateKept, PublishConfidence: b.Config.Report.PublishConfidence,
		Bad:        record.End{Commit: commit(nights[since].Tip)},
		Candidates: []record.Commit{commit(nights[since].Tip)},
	}
	f.CommitURL = b.Config.GitHub.CommitURL()
	if since > 0 {
		f.Good = record.End{Commit: commit(nights[since-1].Tip)}
	}
	broken := true
	for _, n := range nights[since:] {
		if n.Status == record.StatusOK {
			broken = false
		}
		status := string(n.Status)
		if n.Error != "" {
			first, _, _ := strings.Cut(n.Error, "\n")
			status += ": " + first
		}
		f.Probes = append(f.Probes, record.Probe{Commit: commit(n.Tip), Status: status, Verdict: fmt.Sprintf("night %d", n.Seq)})
	}
	if broken {
		f.Outcome = record.OutcomeBuildBroken
		f.Logs = nights[len(nights)-1].Error
	}
	f.ID = f.DerivedID()
	if old, ok, err := b.Store.Finding(f.ID); err != nil {
		return "", err
	} else if ok && old.State == record.StateFiled {
		return f.ID, nil
	}
	b.progressf("nightly: %s: %s since %s (%d nights)", m.Name, f.Outcome, record.ShortHash(nights[since].Tip), count)
	if err := b.File(ctx, []*record.Finding{f}); err != nil {
		return "", err
	}
	return f.ID, nil
}
