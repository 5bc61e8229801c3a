package testbed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/stats"
)

// Measurer runs the testbed's benchmarks at a commit of the generated
// repository.
type Measurer interface {
	// Measure builds commit and runs its benchmarks repeats times. It
	// returns every metric's values, one per run. A commit that does not
	// build gives an error that wraps ErrBuildFailed.
	Measure(ctx context.Context, commit string, repeats int) (map[string][]float64, error)
}

// ErrBuildFailed marks a Measure error caused by the commit itself not
// building, as opposed to the machinery failing.
var ErrBuildFailed = errors.New("build failed")

// ErrNotAsIntended is wrapped by Verify's error when a measured effect
// disagrees with the manifest.
var ErrNotAsIntended = errors.New("effects not as intended")

// Confidence is the confidence level of the intervals Verify prints.
const Confidence = 0.95

// NoEffectTolerance is how far, in percent, the interval of a change meant
// to leave a metric alone may lie from zero: an interval that reaches into
// [-2%, +2%] agrees with "no effect".
const NoEffectTolerance = 2.0

// Effect is a change's measured effect on one metric, or, for a build
// break, whether its commit built.
type Effect struct {
	Change string
	Kind   Kind
	Commit string
	Metric string
	// Intended, Measured, Lo and Hi are percentages of the parent's value;
	// Lo and Hi bound the interval at Confidence.
	Intended          float64
	Measured, Lo, Hi  float64
	Parent, Candidate []float64
	// Built says, for a build break, whether the commit built after all.
	Built bool
}

// OutsideNoise says whether the interval excludes zero.
func (e Effect) OutsideNoise() bool { return e.Lo > 0 || e.Hi < 0 }

// AsIntended says whether the measurement agrees with the manifest: a build
// break does not build; a change meant to move a metric moves it outside the
// noise in the intended direction; a change meant to leave it alone has an
// interval within NoEffectTolerance of zero.
func (e Effect) AsIntended() bool {
	switch {
	case e.Kind == BuildBreak:
		return !e.Built
	case e.Intended == 0:
		return e.Lo <= NoEffectTolerance && e.Hi >= -NoEffectTolerance
	default:
		return e.OutsideNoise() && math.Signbit(e.Measured) == math.Signbit(e.Intended)
	}
}

// Verify measures every change of m against its parent, repeats times
// each, and writes a table of the intended and measured effects to w. The
// parent and the change are measured alternately, one run at a time, so
// that drift of the host affects both alike. It returns an error wrapping
// ErrNotAsIntended when an effect disagrees with the manifest, and any
// other error when measuring fails.
func Verify(ctx context.Context, m *Manifest, measure Measurer, repeats int, w io.Writer) error {
	effects, err := MeasureEffects(ctx, m, measure, repeats)
	if err != nil {
		return err
	}
	if err := WriteEffects(w, effects); err != nil {
		return err
	}
	var off []string
	for _, e := range effects {
		if !e.AsIntended() {
			off = append(off, e.Change+"/"+e.Metric)
		}
	}
	if len(off) > 0 {
		return fmt.Errorf("%w: %s", ErrNotAsIntended, strings.Join(off, ", "))
	}
	return nil
}

// MeasureEffects measures every change of m as Verify does and returns one
// Effect per change and metric, in the manifest's order.
func MeasureEffects(ctx context.Context, m *Manifest, measure Measurer, repeats int) ([]Effect, error) {
	if repeats < 1 {
		return nil, fmt.Errorf("verify: %d repeats, need at least 1", repeats)
	}
	var out []Effect
	for _, c := range m.Changes {
		var effects []Effect
		var err error
		if c.Kind == BuildBreak {
			effects, err = measureBuild(ctx, c, measure)
		} else {
			effects, err = measureChange(ctx, c, measure, repeats)
		}
		if err != nil {
			return nil, fmt.Errorf("verify change %s (%s): %w", c.ID, record.ShortHash(c.Commit), err)
		}
		out = append(out, effects...)
	}
	return out, nil
}

func measureBuild(ctx context.Context, c Change, measure Measurer) ([]Effect, error) {
	_, err := measure.Measure(ctx, c.Commit, 1)
	if err != nil && !errors.Is(err, ErrBuildFailed) {
		return nil, err
	}
	return []Effect{{Change: c.ID, Kind: c.Kind, Commit: c.Commit, Metric: "build", Built: err == nil}}, nil
}

func measureChange(ctx context.Context, c Change, measure Measurer, repeats int) ([]Effect, error) {
	metrics := sortedKeys(c.Effects)
	if len(metrics) == 0 {
		return nil, nil
	}
	parent, cand := map[string][]float64{}, map[string][]float64{}
	for range repeats {
		for _, side := range []struct {
			commit string
			into   map[string][]float64
		}{{c.Parent, parent}, {c.Commit, cand}} {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			got, err := measure.Measure(ctx, side.commit, 1)
			if err != nil {
				return nil, fmt.Errorf("measure %s: %w", record.ShortHash(side.commit), err)
			}
			for _, name := range metrics {
				v, ok := got[name]
				if !ok || len(v) == 0 {
					return nil, fmt.Errorf("measure %s: no values for metric %s", record.ShortHash(side.commit), name)
				}
				side.into[name] = append(side.into[name], v...)
			}
		}
	}
	var out []Effect
	for _, name := range metrics {
		d := stats.Delta(parent[name], cand[name], Confidence)
		out = append(out, Effect{
			Change: c.ID, Kind: c.Kind, Commit: c.Commit, Metric: name,
			Intended: c.Effects[name], Measured: d.Pct, Lo: d.Lo, Hi: d.Hi,
			Parent: parent[name], Candidate: cand[name],
		})
	}
	return out, nil
}

// WriteEffects writes effects as an aligned table.
func WriteEffects(w io.Writer, effects []Effect) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "change\tkind\tcommit\tmetric\tintended\tmeasured\t%.0f%% CI\tn\toutside noise\tas intended\n", Confidence*100)
	for _, e := range effects {
		if e.Kind == BuildBreak {
			built := "fails"
			if e.Built {
				built = "builds"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\tbuild\tfails\t%s\t-\t1\t-\t%s\n", e.Change, e.Kind, record.ShortHash(e.Commit), built, yesNo(e.AsIntended()))
			continue
		}
		intended := "none"
		if e.Intended != 0 {
			intended = fmt.Sprintf("%+.1f%%", e.Intended)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%+.1f%%\t[%s, %s]\t%d+%d\t%s\t%s\n",
			e.Change, e.Kind, record.ShortHash(e.Commit), e.Metric, intended, e.Measured,
			bound(e.Lo), bound(e.Hi), len(e.Parent), len(e.Candidate), yesNo(e.OutsideNoise()), yesNo(e.AsIntended()))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write effects: %w", err)
	}
	return nil
}

func bound(pct float64) string {
	if math.IsInf(pct, 0) || math.IsNaN(pct) {
		return fmt.Sprint(pct)
	}
	return fmt.Sprintf("%+.1f%%", pct)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
