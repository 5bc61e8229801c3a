package model

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/testbed/engine/attention"
	"github.com/perfbot/perfbot/testbed/engine/communicator"
)

// small is a configuration that keeps tests fast.
func small() Config {
	cfg := DefaultConfig()
	cfg.Layers, cfg.MaxSeq = 2, 64
	return cfg
}

func prompt(n, vocab int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = (i*37 + 11) % vocab
	}
	return p
}

func forward(t *testing.T, cfg Config, tokens []int) []float32 {
	t.Helper()
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.Forward(tokens, len(tokens))
	if err != nil {
		t.Fatal(err)
	}
	return slices.Clone(out.Logits)
}

func maxDiff(a, b []float32) float64 {
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

// TestTensorParallelMatchesSingleRank checks that sharding over ranks only
// reorders additions: logits agree with one rank to rounding, whatever the
// allreduce backend.
func TestTensorParallelMatchesSingleRank(t *testing.T) {
	tokens := prompt(12, 512)
	one := small()
	one.Ranks = 1
	want := forward(t, one, tokens)
	for _, tc := range []struct {
		name    string
		ranks   int
		backend string
	}{
		{"2 ranks ring", 2, communicator.Ring},
		{"4 ranks tree", 4, communicator.Tree},
		{"8 ranks ring", 8, communicator.Ring},
		{"8 ranks tree", 8, communicator.Tree},
		{"8 ranks naive", 8, communicator.Naive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := small()
			cfg.Ranks, cfg.Comm.Backend = tc.ranks, tc.backend
			if d := maxDiff(want, forward(t, cfg, tokens)); d > 1e-3 {
				t.Errorf("logits differ from one rank's by up to %g", d)
			}
		})
	}
}

func TestAttentionBackendsAgree(t *testing.T) {
	tokens := prompt(40, 512)
	cfg := small()
	cfg.Attention = attention.Naive
	naive := forward(t, cfg, tokens)
	cfg.Attention = attention.Tiled
	if d := maxDiff(naive, forward(t, cfg, tokens)); d > 1e-3 {
		t.Errorf("tiled and naive logits differ by up to %g", d)
	}
}

// TestExtendMatchesDecode checks, bit for bit, that running tokens together
// in one extend pass gives each the logits of decoding it alone.
func TestExtendMatchesDecode(t *testing.T) {
	for _, backend := range []string{attention.Naive, attention.Tiled} {
		t.Run(backend, func(t *testing.T) {
			cfg := small()
			cfg.Attention = backend
			tokens := prompt(20, cfg.Vocab)
			m, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.Forward(tokens[:16], 0); err != nil {
				t.Fatal(err)
			}
			out, err := m.Forward(tokens[16:], 4)
			if err != nil {
				t.Fatal(err)
			}
			extend := slices.Clone(out.Logits)
			m.Truncate(16)
			for i, tok := range tokens[16:] {
				out, err := m.Forward([]int{tok}, 1)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(out.Logits, extend[i*cfg.Vocab:(i+1)*cfg.Vocab]) {
					t.Errorf("token %d: decode and extend logits differ", 16+i)
				}
			}
		})
	}
}

func TestSameSeedSameWeights(t *testing.T) {
	a, b := NewWeights(small()), NewWeights(small())
	if !slices.Equal(a.Layers[1].Down[3].Data, b.Layers[1].Down[3].Data) {
		t.Error("two draws with one seed differ")
	}
	other := small()
	other.Seed++
	if slices.Equal(a.Embed.Data, NewWeights(other).Embed.Data) {
		t.Error("another seed drew the same embedding")
	}
}

func TestForwardRejects(t *testing.T) {
	m, err := New(small())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		tokens []int
		logits int
		want   string
	}{
		{"no tokens", nil, 0, "0 tokens"},
		{"more logits than tokens", []int{1}, 2, "logits for 2"},
		{"token outside vocabulary", []int{1, 1024}, 1, "outside the vocabulary"},
		{"past the cache", make([]int, 65), 1, "exceed the maximum"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := m.Forward(tc.tokens, tc.logits)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error about %q", err, tc.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"heads over ranks", func(c *Config) { c.Ranks = 3 }, "heads do not split"},
		{"odd head width", func(c *Config) { c.Heads = 128 }, "even head width"},
		{"top-k above experts", func(c *Config) { c.TopK = 9 }, "top-9 of 8"},
		{"no ranks", func(c *Config) { c.Ranks = 0 }, "0 ranks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := small()
			tc.change(&cfg)
			if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error about %q", err, tc.want)
			}
		})
	}
}
