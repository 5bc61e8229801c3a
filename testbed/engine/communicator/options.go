package communicator

import (
	"fmt"
	"strings"
)

// Backend names.
const (
	Ring  = "ring"
	Tree  = "tree"
	Naive = "naive"
)

// Environment variables that steer the fallback chain, read by
// OptionsFromEnv.
const (
	// EnvAllReduce forces a backend: ring, tree or naive. A forced backend
	// that is not eligible for a call falls through the chain as usual.
	EnvAllReduce = "TESTBED_ALLREDUCE"
	// EnvDisableCustom, when 1 or true, takes the custom (ring) allreduce out
	// of the chain.
	EnvDisableCustom = "TESTBED_DISABLE_CUSTOM_AR"
	// EnvMaxCustomBytes caps the message size, in bytes, of the custom
	// allreduce.
	EnvMaxCustomBytes = "TESTBED_CUSTOM_AR_MAX_BYTES"
)

// DefaultMaxCustomBytes is the largest message the custom allreduce takes;
// larger ones go to the next backend, as in SGLang.
const DefaultMaxCustomBytes = 8 << 20

// maxCustomRanks is the largest group the custom allreduce supports.
const maxCustomRanks = 8

// Options steer the choice of the allreduce backend.
type Options struct {
	// Backend, when set, is tried first.
	Backend string
	// DisableCustom takes the custom (ring) allreduce out of the chain.
	DisableCustom bool
	// MaxCustomBytes caps the custom allreduce's message size; 0 means
	// DefaultMaxCustomBytes.
	MaxCustomBytes int
	// Segment is the width in floats of the column blocks the ring hands
	// out; the model sets it to hidden size / ranks.
	Segment int
}

// OptionsFromEnv returns opts with the fields that the environment sets
// replaced. getenv is os.Getenv in production.
func OptionsFromEnv(opts Options, getenv func(string) string) (Options, error) {
	if v := strings.TrimSpace(getenv(EnvAllReduce)); v != "" {
		if !knownBackend(v) {
			return opts, fmt.Errorf("%s=%q: want ring, tree or naive", EnvAllReduce, v)
		}
		opts.Backend = v
	}
	switch v := strings.TrimSpace(getenv(EnvDisableCustom)); strings.ToLower(v) {
	case "":
	case "1", "true", "yes":
		opts.DisableCustom = true
	case "0", "false", "no":
		opts.DisableCustom = false
	default:
		return opts, fmt.Errorf("%s=%q: want 1 or 0", EnvDisableCustom, v)
	}
	if v := strings.TrimSpace(getenv(EnvMaxCustomBytes)); v != "" {
		var n int
		if _, err := fmt.Sscan(v, &n); err != nil || n < 0 {
			return opts, fmt.Errorf("%s=%q: want a byte count", EnvMaxCustomBytes, v)
		}
		opts.MaxCustomBytes = n
	}
	return opts, nil
}

func knownBackend(name string) bool {
	return name == Ring || name == Tree || name == Naive
}

// choose walks the fallback chain (the forced backend if any, then ring,
// tree, naive) and returns the first eligible backend together with the
// reasons the earlier ones were skipped.
func (o Options) choose(ranks, n int) (string, []string) {
	chain := []string{Ring, Tree, Naive}
	if o.Backend != "" {
		chain = append([]string{o.Backend}, chain...)
	}
	var skipped []string
	for _, b := range chain {
		why := o.ineligible(b, ranks, n)
		if why == "" {
			return b, skipped
		}
		skipped = append(skipped, b+": "+why)
	}
	return Naive, skipped
}

// ineligible says why backend b cannot reduce n floats over ranks ranks, or
// returns "" when it can.
func (o Options) ineligible(b string, ranks, n int) string {
	switch b {
	case Ring:
		return o.customIneligible(ranks, n)
	case Tree:
		if ranks&(ranks-1) != 0 {
			return fmt.Sprintf("%d ranks is not a power of two", ranks)
		}
	}
	return ""
}

// customIneligible says why the custom allreduce cannot take the call.
func (o Options) customIneligible(ranks, n int) string {
	limit := o.MaxCustomBytes
	if limit == 0 {
		limit = DefaultMaxCustomBytes
	}
	switch {
	case o.DisableCustom:
		return "disabled by " + EnvDisableCustom
	case ranks > maxCustomRanks:
		return fmt.Sprintf("%d ranks exceed the %d the custom allreduce supports", ranks, maxCustomRanks)
	case n*4 > limit:
		return fmt.Sprintf("%d bytes exceed the custom allreduce limit of %d", n*4, limit)
	case n%(ranks*o.Segment) != 0:
		return fmt.Sprintf("%d floats are not a multiple of %d ranks × %d-float segments", n, ranks, o.Segment)
	}
	return ""
}
