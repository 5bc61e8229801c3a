package bisect

import "testing"

func TestMadeRuns(t *testing.T) {
	seqs := func(ss ...uint64) []Run {
		runs := make([]Run, len(ss))
		for i, s := range ss {
			runs[i] = Run{Value: 1, Seq: s}
		}
		return runs
	}
	for _, tc := range []struct {
		name         string
		known, asked int
		runs         []Run
		before       uint64
		want         int
	}{
		{name: "one run made", known: 2, asked: 1, runs: seqs(1, 2, 5), before: 4, want: 1},
		{name: "more than asked: all held before", known: 2, asked: 1, runs: seqs(1, 2, 3, 4), before: 9, want: 0},
		{name: "as many as asked, held before", known: 2, asked: 1, runs: seqs(1, 2, 3), before: 9, want: 0},
		{name: "nothing seen yet", known: 0, asked: 2, runs: seqs(7, 8), before: 0, want: 2},
		{name: "runs without Seq", known: 1, asked: 1, runs: []Run{{Value: 1}, {Value: 2}}, before: 3, want: 1},
		{name: "two made in one round", known: 1, asked: 2, runs: seqs(1, 6, 7), before: 5, want: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := madeRuns(tc.known, tc.asked, tc.runs, tc.before); got != tc.want {
				t.Errorf("madeRuns(%d, %d, %v, %d) = %d, want %d", tc.known, tc.asked, tc.runs, tc.before, got, tc.want)
			}
		})
	}
}
