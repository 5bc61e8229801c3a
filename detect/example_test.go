package detect_test

import (
	"fmt"
	"math"
	"time"

	"github.com/perfbot/perfbot/detect"
	"github.com/perfbot/perfbot/record"
)

// throughput returns night i of a made-up metric: five repeats around a
// level that wobbles from night to night and falls 6% from night 30 on.
func throughput(i int) detect.Point {
	level := 1000 * (1 + 0.004*math.Sin(1.7*float64(i)))
	if i >= 30 {
		level *= 0.94
	}
	var values []float64
	for _, spread := range []float64{-0.012, 0.004, 0, -0.005, 0.011} {
		values = append(values, level*(1+spread*math.Cos(float64(i))))
	}
	return detect.Point{
		Time:   time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC).AddDate(0, 0, i),
		Commit: fmt.Sprintf("c%02d", i),
		Values: values,
	}
}

func Example() {
	var series []detect.Point
	for i := range 40 {
		series = append(series, throughput(i))
	}
	alerts, err := detect.Detect(series, detect.Config{Better: record.Higher})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range alerts {
		fmt.Printf("%s fired on night %d: new level from night %d, bisect %s..%s\n", a.Direction, a.Night, a.Change, a.Good, a.Bad)
		fmt.Printf("%.0f → %.0f: %+.1f%% [%+.1f%%, %+.1f%%]\n", a.Before, a.After, a.DeltaPct, a.Lo, a.Hi)
	}
	median, lo, hi, _ := detect.Value(series[30])
	fmt.Printf("night 30: %.0f [%.0f, %.0f]\n", median, lo, hi)
	// Output:
	// regression fired on night 30: new level from night 30, bisect c29..c30
	// 1000 → 943: -5.7% [-6.4%, -5.0%]
	// night 30: 943 [941, 944]
}

// Example_nightly is how the nightly service calls Detect: append
// tonight's night (empty when nothing was measured), detect over the whole
// series, act on the alerts that fired tonight, and report a metric that
// has not been measured for MissingNights nights.
func Example_nightly() {
	cfg := detect.Config{Better: record.Higher}
	var series []detect.Point
	for i := range 45 {
		tonight := throughput(i)
		if i >= 42 {
			tonight.Values = nil // the benchmark stopped working
		}
		series = append(series, tonight)
		alerts, err := detect.Detect(series, cfg)
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, a := range alerts {
			if a.Night == len(series)-1 {
				fmt.Printf("night %d: %s %+.1f%%, bisect %s..%s\n", i, a.Direction, a.DeltaPct, a.Good, a.Bad)
			}
		}
		if o, missing, _ := detect.CheckMissing(series, cfg); missing {
			fmt.Printf("night %d: no values for %d nights, since %s (last measured %s)\n", i, o.Nights, o.FirstCommit, o.LastCommit)
		}
	}
	// Output:
	// night 30: regression -5.7%, bisect c29..c30
	// night 44: no values for 3 nights, since c42 (last measured c41)
}
