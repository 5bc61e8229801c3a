package loadgen

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Endpoints a load can drive.
const (
	Completions = "completions"      // POST /v1/completions, "prompt", choices[].text
	Chat        = "chat/completions" // POST /v1/chat/completions, "messages", choices[].delta.content
)

// Config is one load.
type Config struct {
	// URL is the server's base URL (http://127.0.0.1:30000); the
	// endpoint's path is added to it.
	URL string
	// Endpoint is Completions (the default) or Chat.
	Endpoint string
	// Model is sent as "model"; servers that serve one model ignore it.
	Model string

	// Requests is how many measured requests are sent; Duration, when
	// set instead, sends them until it has passed. One of the two is
	// required; with both, the load ends at whichever comes first.
	Requests int
	Duration time.Duration
	// Warmup requests are sent first, at the same concurrency, and are
	// not counted.
	Warmup int

	// Concurrency is the number of requests in flight of a closed loop
	// (the default when Rate is zero: 1), or the cap on requests in
	// flight at a Rate (zero: none).
	Concurrency int
	// Rate is the mean number of requests sent a second; zero sends
	// them in a closed loop at Concurrency.
	Rate float64
	// Burstiness is the shape of the gamma distribution of the gaps
	// between sends at a Rate: 1 (the default) is a Poisson process,
	// lower is burstier, higher more even.
	Burstiness float64

	// Seed fixes the prompts, their lengths and the arrival times.
	Seed uint64
	// PromptTokens and OutputTokens are the lengths of every request;
	// with RangeRatio r each is drawn uniformly from [L·(1−r), L·(1+r)].
	// A prompt token is one word of the prompt text; the output length is
	// sent as max_tokens (with ignore_eos, which vLLM and SGLang honour).
	PromptTokens int
	OutputTokens int
	RangeRatio   float64

	// TTFTLimit and ITLLimit are the goodput limits: a request counts
	// towards goodput when its TTFT and its largest ITL are within them.
	// Zero is no limit.
	TTFTLimit time.Duration
	ITLLimit  time.Duration

	// RequestTimeout bounds one request; DefaultRequestTimeout when zero.
	RequestTimeout time.Duration
	// MetricsURL, when set, is scraped for Prometheus metrics before and
	// after the load.
	MetricsURL string
	// Ratios are metrics computed from the server's counters over the
	// load (needs MetricsURL).
	Ratios []Ratio

	// Client sends the requests; nil makes one whose pool holds enough
	// connections for the load.
	Client *http.Client
}

// DefaultRequestTimeout bounds one request unless the Config says
// otherwise.
const DefaultRequestTimeout = 10 * time.Minute

// withDefaults returns c with its zero settings defaulted, or an error
// naming the first setting that is wrong.
func (c Config) withDefaults() (Config, error) {
	if c.Endpoint == "" {
		c.Endpoint = Completions
	}
	if c.Burstiness == 0 {
		c.Burstiness = 1
	}
	if c.Rate == 0 && c.Concurrency == 0 {
		c.Concurrency = 1
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	u, err := url.Parse(c.URL)
	var errs []error
	switch {
	case c.URL == "":
		errs = append(errs, errors.New("url: missing (the server's base URL, e.g. http://127.0.0.1:30000)"))
	case err != nil:
		errs = append(errs, fmt.Errorf("url %q: %w", c.URL, err))
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		errs = append(errs, fmt.Errorf("url %q: want http://HOST:PORT", c.URL))
	}
	if c.Endpoint != Completions && c.Endpoint != Chat {
		errs = append(errs, fmt.Errorf("endpoint %q: want %q or %q", c.Endpoint, Completions, Chat))
	}
	if c.Requests < 0 || c.Duration < 0 || c.Requests == 0 && c.Duration == 0 {
		errs = append(errs, errors.New("requests or duration: one of them must be positive"))
	}
	if c.Warmup < 0 {
		errs = append(errs, fmt.Errorf("warmup %d: must not be negative", c.Warmup))
	}
	if c.Concurrency < 0 {
		errs = append(errs, fmt.Errorf("concurrency %d: must not be negative", c.Concurrency))
	}
	if c.Rate < 0 || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0) {
		errs = append(errs, fmt.Errorf("rate %v: want a finite number of requests a second, or 0 for a closed loop", c.Rate))
	}
	if !(c.Burstiness > 0) || math.IsInf(c.Burstiness, 0) {
		errs = append(errs, fmt.Errorf("burstiness %v: want a positive finite gamma shape (1 is Poisson)", c.Burstiness))
	}
	if c.PromptTokens < 1 {
		errs = append(errs, fmt.Errorf("prompt tokens %d: want at least 1", c.PromptTokens))
	}
	if c.OutputTokens < 1 {
		errs = append(errs, fmt.Errorf("output tokens %d: want at least 1", c.OutputTokens))
	}
	if !(c.RangeRatio >= 0 && c.RangeRatio < 1) {
		errs = append(errs, fmt.Errorf("range ratio %v: want 0 ≤ r < 1", c.RangeRatio))
	}
	if c.TTFTLimit < 0 || c.ITLLimit < 0 || c.RequestTimeout < 0 {
		errs = append(errs, errors.New("limits and timeouts must not be negative"))
	}
	if len(c.Ratios) > 0 && c.MetricsURL == "" {
		errs = append(errs, errors.New("server ratios need the server's metrics URL"))
	}
	if err := errors.Join(errs...); err != nil {
		return c, fmt.Errorf("load: %w", err)
	}
	c.URL = strings.TrimSuffix(c.URL, "/")
	return c, nil
}

// maxInFlight is the most requests the load has in flight at once; 0 when
// unbounded (a Rate without a Concurrency cap).
func (c Config) maxInFlight() int { return c.Concurrency }

// newClient returns a client whose pool keeps a connection for every
// request in flight: a pool smaller than the concurrency queues requests
// in the client and adds the wait to TTFT.
func (c Config) newClient() *http.Client {
	conns := c.maxInFlight()
	if conns == 0 {
		conns = 4096
	}
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil, // the load goes to the server named, never through a proxy
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}}
}
