package server

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/views"
)

// VitalsReader reads what /metrics exposes (views.VitalsReader).
type VitalsReader interface {
	Read(ctx context.Context) (*views.Vitals, error)
}

var _ VitalsReader = (*views.VitalsReader)(nil)

// The metrics of /metrics, read from the store at each scrape:
//
//	perfbot_jobs{state}                          gauge: jobs by state
//	perfbot_runs_total{host,status}              counter: benchmark runs
//	perfbot_run_seconds_total{host,status}       counter: their wall time
//	perfbot_findings{state}                      gauge: findings by triage state
//	perfbot_last_successful_cycle_timestamp_seconds  gauge: the newest night's time
//	perfbot_host_in_pool{host}                   gauge: 1 while the host is in the pool, 0 once it left
//	perfbot_host_failures{host}                  gauge: the host's failures in a row
//
// beside the Go runtime's and the process's own.
var (
	descJobs      = prometheus.NewDesc("perfbot_jobs", "Jobs of the queue by state.", []string{"state"}, nil)
	descRuns      = prometheus.NewDesc("perfbot_runs_total", "Benchmark runs recorded, by host and status.", []string{"host", "status"}, nil)
	descRunSecs   = prometheus.NewDesc("perfbot_run_seconds_total", "Wall time of the recorded benchmark runs, by host and status.", []string{"host", "status"}, nil)
	descFindings  = prometheus.NewDesc("perfbot_findings", "Findings by triage state.", []string{"state"}, nil)
	descLastCycle = prometheus.NewDesc("perfbot_last_successful_cycle_timestamp_seconds",
		"Time of the last nightly cycle that recorded its night, in Unix seconds (absent before the first).", nil, nil)
	descHostIn = prometheus.NewDesc("perfbot_host_in_pool",
		"1 while the host gets leases, 0 once it left the pool after failing too many times in a row.", []string{"host"}, nil)
	descHostFailures = prometheus.NewDesc("perfbot_host_failures",
		"The host's failures in a row (unreachable, key refused, connection dropped) since it last worked.", []string{"host"}, nil)
)

// vitalsCollector is a prometheus.Collector over a VitalsReader.
type vitalsCollector struct {
	r VitalsReader
}

func (c vitalsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descJobs, descRuns, descRunSecs, descFindings, descLastCycle, descHostIn, descHostFailures} {
		ch <- d
	}
}

func (c vitalsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := c.r.Read(ctx)
	if err != nil {
		for _, d := range []*prometheus.Desc{descJobs, descRuns, descFindings} {
			ch <- prometheus.NewInvalidMetric(d, err)
		}
		return
	}
	for _, st := range []record.JobState{record.JobQueued, record.JobRunning, record.JobDone, record.JobFailed} {
		ch <- prometheus.MustNewConstMetric(descJobs, prometheus.GaugeValue, float64(v.Jobs[st]), string(st))
	}
	for k, t := range v.Runs {
		ch <- prometheus.MustNewConstMetric(descRuns, prometheus.CounterValue, float64(t.Runs), k.Host, string(k.Status))
		ch <- prometheus.MustNewConstMetric(descRunSecs, prometheus.CounterValue, t.Seconds, k.Host, string(k.Status))
	}
	for _, st := range record.Triages() {
		ch <- prometheus.MustNewConstMetric(descFindings, prometheus.GaugeValue, float64(v.Findings[st]), string(st))
	}
	if !v.LastCycle.IsZero() {
		ch <- prometheus.MustNewConstMetric(descLastCycle, prometheus.GaugeValue, float64(v.LastCycle.UnixNano())/1e9)
	}
	for _, h := range v.Hosts {
		in := 1.0
		if h.Out {
			in = 0
		}
		ch <- prometheus.MustNewConstMetric(descHostIn, prometheus.GaugeValue, in, h.Name)
		ch <- prometheus.MustNewConstMetric(descHostFailures, prometheus.GaugeValue, float64(h.Failures), h.Name)
	}
}

// metricsHandler serves /metrics from a registry of its own (no global
// state: two servers in one process do not share metrics).
func (s *srv) metricsHandler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	r := s.opts.Vitals
	if v, ok := s.read.(interface{ NewVitalsReader() *views.VitalsReader }); ok && r == nil {
		r = v.NewVitalsReader()
	}
	if r != nil {
		reg.MustRegister(vitalsCollector{r: r})
	}
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}
