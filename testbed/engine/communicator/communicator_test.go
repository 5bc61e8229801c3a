package communicator

import (
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
)

// reduce runs one AllReduce on every rank of g over copies of in and
// returns the ranks' buffers afterwards.
func reduce(g *Group, in [][]float32) [][]float32 {
	out := make([][]float32, len(in))
	var wg sync.WaitGroup
	for r := range in {
		out[r] = append([]float32(nil), in[r]...)
		wg.Go(func() { g.AllReduce(r, out[r]) })
	}
	wg.Wait()
	return out
}

func partials(ranks, n int) [][]float32 {
	in := make([][]float32, ranks)
	for r := range in {
		in[r] = make([]float32, n)
		for i := range in[r] {
			in[r][i] = float32(math.Sin(float64(r*n+i))) * float32(1+i%5)
		}
	}
	return in
}

func close32(a float32, b float64, rel float64) bool {
	return math.Abs(float64(a)-b) <= rel*(1+math.Abs(b))
}

func TestAllReduceSums(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ranks   int
		segment int
		n       int
	}{
		{"two ranks", 2, 4, 64},
		{"four ranks", 4, 8, 256},
		{"eight ranks one token", 8, 16, 128},
		{"eight ranks four tokens", 8, 16, 512},
		{"eight ranks several packets", 8, 16, 4096},
		{"six ranks", 6, 4, 240},
	} {
		in := partials(tc.ranks, tc.n)
		want := make([]float64, tc.n)
		for _, p := range in {
			for i, v := range p {
				want[i] += float64(v)
			}
		}
		for _, backend := range []string{Ring, Tree, Naive} {
			t.Run(tc.name+"/"+backend, func(t *testing.T) {
				g, err := NewGroup(tc.ranks, Options{Backend: backend, Segment: tc.segment})
				if err != nil {
					t.Fatal(err)
				}
				out := reduce(g, in)
				for r := range out {
					for i, v := range out[r] {
						if !close32(v, want[i], 1e-5) {
							t.Fatalf("rank %d element %d: got %g, want %g", r, i, v, want[i])
						}
					}
					if !slices.Equal(out[0], out[r]) {
						t.Errorf("rank %d disagrees with rank 0", r)
					}
				}
			})
		}
	}
}

// TestAllReduceIndependentOfTokens checks that a token's sum does not
// depend on how many tokens are reduced together, bit for bit: speculative
// decoding relies on it.
func TestAllReduceIndependentOfTokens(t *testing.T) {
	const hidden, ranks, tokens = 128, 8, 4
	in := partials(ranks, tokens*hidden)
	for _, backend := range []string{Ring, Tree, Naive} {
		t.Run(backend, func(t *testing.T) {
			g, err := NewGroup(ranks, Options{Backend: backend, Segment: hidden / ranks})
			if err != nil {
				t.Fatal(err)
			}
			batch := reduce(g, in)[0]
			for tok := range tokens {
				one := make([][]float32, ranks)
				for r := range one {
					one[r] = in[r][tok*hidden : (tok+1)*hidden]
				}
				if got := reduce(g, one)[0]; !slices.Equal(batch[tok*hidden:(tok+1)*hidden], got) {
					t.Errorf("token %d reduced alone differs from the batch", tok)
				}
			}
		})
	}
}

// TestAllReduceBackToBack checks that a fast rank starting the next call
// cannot overwrite a buffer a slow one still reads.
func TestAllReduceBackToBack(t *testing.T) {
	for _, backend := range []string{Ring, Tree, Naive} {
		t.Run(backend, func(t *testing.T) {
			g, err := NewGroup(4, Options{Backend: backend, Segment: 8})
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			got := make([][]float32, 4)
			for r := range 4 {
				wg.Go(func() {
					buf := make([]float32, 64)
					for round := range 50 {
						for i := range buf {
							buf[i] = float32(r + round)
						}
						g.AllReduce(r, buf)
						got[r] = append(got[r], buf[63])
					}
				})
			}
			wg.Wait()
			for r := range got {
				for round, v := range got[r] {
					if want := float32(6 + 4*round); v != want {
						t.Fatalf("rank %d round %d: got %g, want %g", r, round, v, want)
					}
				}
			}
		})
	}
}

func TestFallbackChain(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    Options
		ranks   int
		n       int
		want    string
		skipped int
	}{
		{"custom preferred", Options{}, 8, 512, Ring, 0},
		{"custom preferred for one token", Options{}, 8, 128, Ring, 0},
		{"custom disabled", Options{DisableCustom: true}, 8, 512, Tree, 1},
		{"over the custom limit", Options{MaxCustomBytes: 1024}, 8, 512, Tree, 1},
		{"not a multiple of the segments", Options{}, 8, 100, Tree, 1},
		{"too many ranks for custom", Options{}, 16, 512, Tree, 1},
		{"tree needs a power of two", Options{DisableCustom: true}, 6, 96, Naive, 2},
		{"forced tree", Options{Backend: Tree}, 8, 512, Tree, 0},
		{"forced naive", Options{Backend: Naive}, 8, 512, Naive, 0},
		{"forced but ineligible", Options{Backend: Ring, DisableCustom: true}, 8, 512, Tree, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Segment = 16
			if tc.ranks == 6 {
				tc.opts.Segment = 4
			}
			g, err := NewGroup(tc.ranks, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			got, skipped := g.Explain(tc.n)
			if got != tc.want || len(skipped) != tc.skipped {
				t.Errorf("Explain(%d) = %s, skipped %q; want %s after %d skipped", tc.n, got, skipped, tc.want, tc.skipped)
			}
			if b := g.Backend(tc.n); b != got {
				t.Errorf("Backend(%d) = %s, Explain says %s", tc.n, b, got)
			}
		})
	}
}

func TestOptionsFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    Options
		wantErr string
	}{
		{"nothing set", nil, Options{}, ""},
		{"force tree", map[string]string{EnvAllReduce: "tree"}, Options{Backend: Tree}, ""},
		{"disable custom", map[string]string{EnvDisableCustom: "1"}, Options{DisableCustom: true}, ""},
		{"enable custom", map[string]string{EnvDisableCustom: "0"}, Options{}, ""},
		{"custom limit", map[string]string{EnvMaxCustomBytes: "4096"}, Options{MaxCustomBytes: 4096}, ""},
		{"unknown backend", map[string]string{EnvAllReduce: "nccl"}, Options{}, EnvAllReduce},
		{"bad switch", map[string]string{EnvDisableCustom: "maybe"}, Options{}, EnvDisableCustom},
		{"bad limit", map[string]string{EnvMaxCustomBytes: "-3"}, Options{}, EnvMaxCustomBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := OptionsFromEnv(Options{}, func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestNewGroupRejects(t *testing.T) {
	for _, tc := range []struct {
		ranks int
		opts  Options
		want  string
	}{
		{0, Options{Segment: 1}, "0 ranks"},
		{2, Options{}, "segment"},
		{2, Options{Segment: 1, Backend: "mpi"}, `"mpi"`},
	} {
		_, err := NewGroup(tc.ranks, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewGroup(%d, %+v): got %v, want an error about %s", tc.ranks, tc.opts, err, tc.want)
		}
	}
}
