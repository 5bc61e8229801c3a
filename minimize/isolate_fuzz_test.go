package minimize_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/perfbot/perfbot/minimize"
	"github.com/perfbot/perfbot/record"
)

// fuzzOracle answers every configuration from the fuzzer's bytes: each
// sample takes the next byte, and some bytes stand for values no
// benchmark should give (NaN, ±Inf, zero, negative) or for a
// configuration that does not build.
type fuzzOracle struct {
	data  []byte
	next  int
	calls int
}

func (o *fuzzOracle) Samples(ctx context.Context, set []string, n int) ([]float64, error) {
	o.calls++
	if o.calls > 5000 {
		return nil, fmt.Errorf("fuzz oracle: more than 5000 calls")
	}
	var out []float64
	for range n {
		b := o.data[o.next%len(o.data)]
		o.next++
		switch b % 16 {
		case 0:
			return nil, fmt.Errorf("fuzz oracle: %w", record.ErrBroken)
		case 1:
			out = append(out, math.NaN())
		case 2:
			out = append(out, math.Inf(1))
		case 3:
			out = append(out, math.Inf(-1))
		case 4:
			out = append(out, 0)
		case 5:
			out = append(out, -float64(b))
		default:
			v := 1000 + float64(b)
			if slices.Contains(set, "h0") && b%2 == 1 {
				v *= 0.9
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// FuzzIsolate drives the set search with arbitrary values, orders and
// failures and asserts only that it returns.
func FuzzIsolate(f *testing.F) {
	f.Add([]byte{200, 201, 202, 203}, uint8(3), false)
	f.Add([]byte{0, 0, 0}, uint8(2), true)
	f.Add([]byte{1, 2, 3, 4, 5}, uint8(4), false)
	f.Add([]byte{17, 17, 17, 17}, uint8(1), true)
	f.Add([]byte{99, 33, 201, 6, 250, 7, 88}, uint8(6), true)
	f.Fuzz(func(t *testing.T, data []byte, n uint8, lower bool) {
		if len(data) == 0 {
			return
		}
		k := int(n%6) + 1
		var ids []string
		for i := range k {
			ids = append(ids, fmt.Sprintf("h%d", i))
		}
		groups := []minimize.Group{{Name: "a.go", Elements: ids[:(k+1)/2]}}
		if k > 1 {
			groups = append(groups, minimize.Group{Name: "b.go", Elements: ids[(k+1)/2:]})
		}
		better := record.Higher
		if lower {
			better = record.Lower
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		o := &fuzzOracle{data: data}
		_, _ = minimize.Isolate(ctx, o, minimize.Options{
			Groups: groups, Deps: map[string][]string{ids[k-1]: {ids[0]}}, Better: better,
			MaxRunsPerTest: 12, InitialRuns: 3,
		})
	})
}
