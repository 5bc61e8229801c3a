package record

import "time"

// Status is the outcome of a run.
type Status string

// The statuses of a run. A broken revision is a status (build or benchmark
// failed: the search skips it); infrastructure that failed is an error, and
// a run that ended in one is recorded as StatusInfraError and never counts
// as a sample.
const (
	StatusOK          Status = "ok"
	StatusBuildFailed Status = "build_failed"
	StatusBenchFailed Status = "bench_failed"
	StatusInfraError  Status = "infra_error"
)

// Valid reports whether s is one of the statuses above.
func (s Status) Valid() bool {
	switch s {
	case StatusOK, StatusBuildFailed, StatusBenchFailed, StatusInfraError:
		return true
	}
	return false
}

// Run is one execution of a Spec on a Target on a host: the build (when it
// had to be done) and one invocation of every benchmark step.
type Run struct {
	ID        uint64        `json:"id"` // assigned by the store
	TargetKey string        `json:"target_key"`
	SpecHash  string        `json:"spec_hash"`
	Target    Target        `json:"target"`
	Host      string        `json:"host"`
	Node      string        `json:"node,omitempty"` // the cluster node that ran it; empty on a one-machine host
	Status    Status        `json:"status"`
	Error     string        `json:"error,omitempty"`
	Started   time.Time     `json:"started"`
	Duration  time.Duration `json:"duration"`
	// Overhead is the part of Duration not spent in build or benchmark
	// commands (perfbot's own cost).
	Overhead    time.Duration `json:"overhead"`
	Fingerprint Fingerprint   `json:"fingerprint"`
	Logs        []Log         `json:"logs,omitempty"`
	// Values are the metric values this run produced, by metric name.
	Values map[string]float64 `json:"values,omitempty"`
	// Samples are every value the benchmark output held.
	Samples []Sample `json:"samples,omitempty"`
}

// Log is the captured output of one step, capped in size.
type Log struct {
	Step      string `json:"step"`
	Output    string `json:"output"`
	Truncated bool   `json:"truncated,omitempty"`
	ExitCode  int    `json:"exit_code"`
}

// Fingerprint is the environment a benchmark process actually saw.
type Fingerprint struct {
	Host      string            `json:"host"`
	OS        string            `json:"os"`
	Kernel    string            `json:"kernel,omitempty"`
	CPUModel  string            `json:"cpu_model"`
	CPUs      int               `json:"cpus"`
	GoVersion string            `json:"go_version,omitempty"`
	Python    string            `json:"python,omitempty"`
	Env       map[string]string `json:"env"`
	// Reported is what the benchmark said about the software it ran on:
	// the configuration lines ("torch: 2.11.0", "cuda: 12.8") of Go
	// benchmark format output, the first step's value of each key.
	Reported map[string]string `json:"reported,omitempty"`
	// GPUs are the GPUs as the benchmark found them: nvidia-smi's first
	// sample of its step when the host samples (older runs: a snapshot
	// of the host before the run).
	GPUs []GPU `json:"gpus,omitempty"`
	// GPUState summarizes each GPU's samples during each benchmark step.
	GPUState []GPUState `json:"gpu_state,omitempty"`
	// GPUTopology is nvidia-smi topo -m on the host.
	GPUTopology string `json:"gpu_topology,omitempty"`
	// NCCLConf holds the NCCL configuration files the benchmark's NCCL
	// reads (/etc/nccl.conf, ~/.nccl.conf, $NCCL_CONF_FILE), by path, as
	// read on the host when the step started.
	NCCLConf map[string]string `json:"nccl_conf,omitempty"`
	// NCCL is what the NCCL_DEBUG=INFO lines of the benchmark's output
	// say; nil when it printed none.
	NCCL *NCCLInfo `json:"nccl,omitempty"`
	// ClusterNode is the cluster node the run's benchmark ran on, as the
	// cluster reports it; nil on a host that is one machine.
	ClusterNode *ClusterNode `json:"cluster_node,omitempty"`
	// LoadAvg is the host's load averages just before the run, as
	// /proc/loadavg gives them ("0.52 0.40 0.33"), and CPUAffinity the
	// CPUs the benchmark's processes may run on ("0-15"); "" when the
	// host does not tell (only local hosts record them so far).
	LoadAvg     string `json:"load_avg,omitempty"`
	CPUAffinity string `json:"cpu_affinity,omitempty"`
}

// GPU is what nvidia-smi reported about one device during a run.
type GPU struct {
	Index           int     `json:"index"`
	Name            string  `json:"name"`
	Driver          string  `json:"driver"`
	SMClockMHz      float64 `json:"sm_clock_mhz"`
	MemClockMHz     float64 `json:"mem_clock_mhz"`
	TemperatureC    float64 `json:"temperature_c"`
	PowerW          float64 `json:"power_w"`
	ThrottleReasons string  `json:"throttle_reasons,omitempty"`
	UtilizationPct  float64 `json:"utilization_pct,omitempty"`
}

// Better says which way a metric improves.
type Better string

const (
	// Higher means larger values are better (tok/s, GB/s).
	Higher Better = "higher"
	// Lower means smaller values are better (ms/verify, us/op).
	Lower Better = "lower"
)

// Sample is one value read from one benchmark invocation.
type Sample struct {
	// Name is the benchmark, row or field the value comes from, as written
	// in the output (for Go benchmarks the full name without the
	// "Benchmark" prefix, e.g. "VerifyStep/k=3-2").
	Name string `json:"name"`
	// Unit is the unit as written ("tok/s", "ms/verify", "GB/s", "sec/op").
	Unit string `json:"unit"`
	// Value is the measured value in Unit.
	Value float64 `json:"value"`
	// Better is the direction declared by the output (Unit metadata), or
	// empty when the output does not say.
	Better Better `json:"better,omitempty"`
}

// MetricSummary summarizes the samples of one metric of one target: what
// perfbot measure reports, and a commit's view of each metric.
type MetricSummary struct {
	Metric string  `json:"metric"`
	Unit   string  `json:"unit"`
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	// Coverage is the probability that [Lo, Hi] holds the median: 0.95
	// for the order-statistic interval of six runs and more; below six,
	// [Lo, Hi] is the range of the runs and covers it with 1 − 2·0.5ⁿ.
	Coverage float64 `json:"coverage"`
	// Range says that [Lo, Hi] is the runs' minimum and maximum, not a 95%
	// interval.
	Range bool `json:"range,omitempty"`
}
