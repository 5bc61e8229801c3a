package views

import (
	"fmt"
	"time"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/specdecode"
)

// SpecHistoryRow is the speculative-decoding breakdown of one commit, as
// `perfbot history --speculative` prints it.
type SpecHistoryRow struct {
	Commit  string `json:"commit"`
	Subject string `json:"subject,omitempty"`
	// Time is the start of the commit's newest run.
	Time time.Time `json:"time"`
	// TokS is the speculative throughput over the same runs.
	TokS      record.SpecEstimate  `json:"tok_s"`
	Breakdown record.SpecBreakdown `json:"breakdown"`
	// Slower says that speculation was slower than plain decoding.
	Slower bool `json:"slower"`
	// Error says why a commit's runs give no breakdown (a term that is
	// not a positive number).
	Error string `json:"error,omitempty"`
}

// SpeculativeHistory computes the breakdown of every commit in rows (the
// samples of every metric, as History returns them), newest commit
// first; a run's terms are taken together. Commits none of whose runs
// measured every term are left out; limit > 0 keeps that many commits.
// A configuration without a speculative block is an *record.InputError.
func SpeculativeHistory(c *config.Config, rows []HistoryRow, limit int) ([]SpecHistoryRow, error) {
	s := c.Speculative
	if s == nil {
		return nil, &record.InputError{Err: fmt.Errorf("the configuration has no speculative block naming the breakdown's metrics")}
	}
	type run struct {
		commit, subject string
		time            time.Time
		values          map[string]float64
	}
	runs := map[uint64]*run{}
	var order []uint64 // run ids, newest first
	for _, r := range rows {
		if r.Status != "" && r.Status != string(record.StatusOK) {
			continue
		}
		x, ok := runs[r.RunID]
		if !ok {
			x = &run{commit: r.Commit, subject: r.Subject, time: r.Time, values: map[string]float64{}}
			runs[r.RunID] = x
			order = append(order, r.RunID)
		}
		x.values[r.Metric] = r.Value
	}
	var out []SpecHistoryRow
	byCommit := map[string]int{}
	cycles := map[string][]specdecode.Cycle{}
	tokS := map[string][]float64{}
	for _, id := range order {
		x := runs[id]
		var cyc specdecode.Cycle
		var ok bool
		cyc.VerifyMs, cyc.DraftMs, cyc.DecodeMs, cyc.Accept, ok = s.Terms(x.values)
		if !ok {
			continue
		}
		if _, seen := byCommit[x.commit]; !seen {
			byCommit[x.commit] = len(out)
			out = append(out, SpecHistoryRow{Commit: x.commit, Subject: x.subject, Time: x.time})
		}
		cycles[x.commit] = append(cycles[x.commit], cyc)
		if v, ok := x.values[s.TokS]; ok {
			tokS[x.commit] = append(tokS[x.commit], v)
		}
	}
	for i := range out {
		row := &out[i]
		b, err := specdecode.Summarize(cycles[row.Commit], config.SpecConfidence)
		if err != nil {
			row.Error = err.Error()
			continue
		}
		row.Breakdown, row.Slower = b, b.Slower()
		row.TokS = specdecode.Median(tokS[row.Commit], config.SpecConfidence)
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
