package stats_test

import (
	"fmt"
	"math"

	"github.com/perfbot/perfbot/stats"
)

func Example() {
	good := []float64{812, 815, 809, 811, 814, 813}
	bad := []float64{701, 699, 705, 702, 698, 700}
	s := stats.Summarize(bad, 0.95)
	fmt.Printf("bad: median %.1f, %.0f%% CI [%.0f, %.0f]\n", s.Median, 100*s.Confidence, s.Lo, s.Hi)
	fmt.Printf("change: %s\n", stats.Delta(good, bad, 0.95))
	p, _ := stats.Compare(good, bad)
	fmt.Printf("p=%.3f\n", p)
	// Output:
	// bad: median 700.5, 97% CI [698, 705]
	// change: -13.8% [-14.1%, -13.3%]
	// p=0.002
}

// Example_comparator shows the comparator the searches decide with: the
// robust scale of runs in groups, and the posterior that a probe's runs
// share the bad end's level.
func Example_comparator() {
	good := []float64{100.4, 99.1, 100.9, 99.6, 100.2, 99.8, 100.6, 99.3, 100.1, 99.9, 100.3}
	bad := []float64{95.2, 94.6, 95.9, 94.9, 95.4, 95.1, 94.7, 95.6, 95.0, 95.3, 94.8}
	sigma := stats.Scale([][]float64{stats.Logs(good), stats.Logs(bad)})
	fmt.Printf("robust σ of one run: %.1f%%\n", 100*sigma)
	fmt.Printf("P(bad) of a probe at 95.1: %.3f\n", stats.Classify(good, bad, []float64{95.1}))
	fmt.Printf("P(bad) of a probe at 99.8: %.3f\n", stats.Classify(good, bad, []float64{99.8}))
	fmt.Printf("P(T ≤ 2.015) with 5 df: %.3f\n", stats.StudentCDF(2.015, 5))
	fmt.Println(math.IsNaN(stats.Median(nil)))
	// Output:
	// robust σ of one run: 0.7%
	// P(bad) of a probe at 95.1: 1.000
	// P(bad) of a probe at 99.8: 0.000
	// P(T ≤ 2.015) with 5 df: 0.950
	// true
}
