package loadgen

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// Run sends the load c describes and returns its report. Failed requests
// are counted in the report, not returned as an error; the error is for a
// load that could not be sent at all (a bad Config, ctx ended). A metrics
// scrape that fails is noted in the report.
func Run(ctx context.Context, c Config) (*Report, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	client := c.Client
	if client == nil {
		client = c.newClient()
		defer client.CloseIdleConnections()
	}
	if c.Warmup > 0 {
		warm := c
		warm.Rate, warm.Requests, warm.Duration = 0, c.Warmup, 0
		if warm.Concurrency == 0 {
			warm.Concurrency = min(c.Warmup, 64)
		}
		closedLoop(ctx, warm, client, streamWarmup, time.Now())
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	var before, after scrape
	var notes []string
	if c.MetricsURL != "" {
		if before, err = scrapeMetrics(ctx, client, c.MetricsURL); err != nil {
			notes = append(notes, "metrics before the load: "+err.Error())
		}
	}
	start := time.Now()
	var results []result
	if c.Rate > 0 {
		results = openLoop(ctx, c, client, start)
	} else {
		results = closedLoop(ctx, c, client, streamMeasured, start)
	}
	duration := time.Since(start)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c.MetricsURL != "" && before != nil {
		if after, err = scrapeMetrics(ctx, client, c.MetricsURL); err != nil {
			notes = append(notes, "metrics after the load: "+err.Error())
		}
	}
	rep := report(c, results, duration)
	if before != nil && after != nil {
		if rep.Spec = specDecode(before, after); rep.Spec != nil {
			rep.Spec.metrics(rep.Metrics)
		}
		notes = append(notes, ratios(c.Ratios, before, after, rep.Metrics)...)
	}
	rep.Notes = append(rep.Notes, notes...)
	return rep, nil
}

// closedLoop sends requests of stream from Concurrency workers, each
// sending its next when the last one ended, until Requests were sent or
// Duration passed.
func closedLoop(ctx context.Context, c Config, client *http.Client, stream uint64, start time.Time) []result {
	var (
		mu      sync.Mutex
		next    int
		results []result
		wg      sync.WaitGroup
	)
	var deadline time.Time
	if c.Duration > 0 {
		deadline = start.Add(c.Duration)
	}
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if c.Requests > 0 && next >= c.Requests || !deadline.IsZero() && !time.Now().Before(deadline) || ctx.Err() != nil {
			return 0, false
		}
		next++
		return next - 1, true
	}
	for range c.Concurrency {
		wg.Go(func() {
			for {
				i, ok := take()
				if !ok {
					return
				}
				r := c.do(ctx, client, c.requestAt(stream, uint64(i)))
				mu.Lock()
				results = append(results, r)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return results
}

// openLoop sends request i at start + arrival i, on the clock rather than
// after the previous send, at most Concurrency in flight when that is set
// (a send waits for a free place, and its times start when it is sent;
// the wait from its scheduled time is reported as its queue time, which
// shows a load that the client could not send on time).
func openLoop(ctx context.Context, c Config, client *http.Client, start time.Time) []result {
	rng := rand.New(rand.NewPCG(c.Seed, streamArrivals<<48))
	var at []time.Duration
	if c.Duration > 0 {
		at = arrivalsFor(rng, c.Duration, c.Rate, c.Burstiness, c.Requests)
	} else {
		at = arrivals(rng, c.Requests, c.Rate, c.Burstiness)
	}
	var sem chan struct{}
	if c.Concurrency > 0 {
		sem = make(chan struct{}, c.Concurrency)
	}
	results := make([]result, len(at))
	var wg sync.WaitGroup
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for i, d := range at {
		if wait := time.Until(start.Add(d)); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				results = results[:i]
				wg.Wait()
				return results
			}
		}
		if sem != nil {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				results = results[:i]
				wg.Wait()
				return results
			}
		}
		scheduled := start.Add(d)
		wg.Go(func() {
			results[i] = c.do(ctx, client, c.requestAt(streamMeasured, uint64(i)))
			results[i].queued = max(results[i].sent.Sub(scheduled), 0)
			if sem != nil {
				<-sem
			}
		})
	}
	wg.Wait()
	return results
}

// String describes the load in one line.
func (c Config) String() string {
	load := fmt.Sprintf("concurrency %d", c.Concurrency)
	if c.Rate > 0 {
		load = fmt.Sprintf("%g req/s (burstiness %g", c.Rate, c.Burstiness)
		if c.Concurrency > 0 {
			load += fmt.Sprintf(", at most %d in flight", c.Concurrency)
		}
		load += ")"
	}
	size := fmt.Sprintf("%d requests", c.Requests)
	if c.Duration > 0 {
		size = c.Duration.String()
		if c.Requests > 0 {
			size += fmt.Sprintf(" or %d requests", c.Requests)
		}
	}
	return fmt.Sprintf("%s/v1/%s: %s at %s, %d+%d tokens (range %g), seed %d", c.URL, c.Endpoint, size, load, c.PromptTokens, c.OutputTokens, c.RangeRatio, c.Seed)
}
