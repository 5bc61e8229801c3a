package stats_test

import (
	"fmt"

	"github.com/perfbot/perfbot/stats"
)

func Example() {
	good := []float64{812, 815, 809, 811, 814, 813}
	bad := []float64{701, 699, 705, 702, 698, 700}
	s := stats.Summarize(bad, 0.95)
	fmt.Printf("bad: median %.1f, %.0f%% CI [%.0f, %.0f]\n", s.Median, 100*s.Confidence, s.Lo, s.Hi)
	pct, lo, hi := stats.Delta(good, bad, 0.95)
	fmt.Printf("change: %+.1f%% [%+.1f%%, %+.1f%%]\n", pct, lo, hi)
	p, _ := stats.Compare(good, bad)
	fmt.Printf("p=%.3f\n", p)
	// Output:
	// bad: median 700.5, 97% CI [698, 705]
	// change: -13.8% [-14.1%, -13.3%]
	// p=0.002
}
