package record

// WarnGPUState: the runs of Commit, a probe, met GPU GPU in another state
// than the ends' runs: a median SM clock of MHz against EndMHz (Pct
// apart) or slowdown Reasons that neither end had. Its values may be the
// machine's, not the code's.
const WarnGPUState WarningKind = "gpu_state"

// GPUState is what nvidia-smi reported about one GPU while one benchmark
// step ran, sampled about once a second on the host where it ran: the
// state the benchmark really met, where a snapshot before it sees an idle
// GPU at its lowest clocks.
type GPUState struct {
	// Step is the benchmark step sampled.
	Step  string `json:"step"`
	Index int    `json:"index"`
	Name  string `json:"name,omitempty"`
	// Samples is how many samples the summary is over; Busy how many of
	// them the clocks and the power are over: those during which a kernel
	// ran, or all of them when none did.
	Samples     int    `json:"samples"`
	Busy        int    `json:"busy,omitempty"`
	SMClockMHz  Spread `json:"sm_clock_mhz"`
	MemClockMHz Spread `json:"mem_clock_mhz"`
	// MaxTemperatureC is the hottest sample.
	MaxTemperatureC float64 `json:"max_temperature_c"`
	MeanPowerW      float64 `json:"mean_power_w"`
	MaxPowerW       float64 `json:"max_power_w"`
	// MeanUtilizationPct is the mean of utilization.gpu, the share of
	// time a kernel ran.
	MeanUtilizationPct float64 `json:"mean_utilization_pct"`
	// ThrottleReasons is the union of the active clock event (throttle)
	// reasons over the samples, a bitmask as nvidia-smi writes it.
	ThrottleReasons string `json:"throttle_reasons,omitempty"`
	// Slowdowns counts, for each reason that lowers the clocks ("HW
	// slowdown", "SW power cap", …; not "idle"), the samples during which
	// it was active.
	Slowdowns map[string]int `json:"slowdowns,omitempty"`
}

// Spread is the smallest, median and largest of a series of samples.
type Spread struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

// NCCLInfo is what NCCL_DEBUG=INFO lines in a benchmark's output say NCCL
// did: the evidence that the variables reached it and what it chose.
type NCCLInfo struct {
	// Version is the NCCL library's ("2.28.9+cuda13.0").
	Version string `json:"version,omitempty"`
	// Env holds the variables NCCL reported "set by environment", with
	// the values it read.
	Env map[string]string `json:"env,omitempty"`
	// Ranks and Nodes are the largest communicator's size.
	Ranks int `json:"ranks,omitempty"`
	Nodes int `json:"nodes,omitempty"`
	// Network is the transport NCCL used between nodes ("Socket", "IB").
	Network string `json:"network,omitempty"`
	// Channels are the counts of the "N coll channels, N nvls channels,
	// …" line by kind ("coll", "nvls", "p2p per peer").
	Channels map[string]int `json:"channels,omitempty"`
	// Algorithms are the algorithm and protocol NCCL chose per collective,
	// where its TUNING lines say so, in the order first seen.
	Algorithms []NCCLAlgorithm `json:"algorithms,omitempty"`
}

// NCCLAlgorithm is one choice of algorithm and protocol for a collective,
// over the message sizes NCCL made it for.
type NCCLAlgorithm struct {
	Collective string `json:"collective"`
	Algorithm  string `json:"algorithm"`
	Protocol   string `json:"protocol"`
	MinBytes   int64  `json:"min_bytes"`
	MaxBytes   int64  `json:"max_bytes"`
	Calls      int    `json:"calls"`
}

// StateDiffKind names a way in which the GPU or NCCL state of two runs
// differs.
type StateDiffKind string

// The kinds of state difference; the fields a kind uses are listed with
// it.
const (
	// DiffSMClock: GPU's median SM clock, GoodMHz and BadMHz, differs by
	// more than the tolerance; GoodSlowdowns and BadSlowdowns name the
	// slowdown reasons each end had.
	DiffSMClock StateDiffKind = "sm_clock"
	// DiffMemClock: GPU's median memory clock, GoodMHz and BadMHz.
	DiffMemClock StateDiffKind = "mem_clock"
	// DiffSlowdowns: GPU ran with slowdown reasons, GoodSlowdowns and
	// BadSlowdowns, that the other end did not have, at similar clocks.
	DiffSlowdowns StateDiffKind = "slowdowns"
	// DiffGPU: GPU's Name (model, driver) reads Good at one end, Bad at
	// the other.
	DiffGPU StateDiffKind = "gpu"
	// DiffTopology: nvidia-smi topo -m, Good and Bad, differs.
	DiffTopology StateDiffKind = "topology"
	// DiffNCCLConf: the NCCL configuration file Name holds Good and Bad
	// ("" when absent).
	DiffNCCLConf StateDiffKind = "nccl_conf"
	// DiffNCCL: what NCCL reported about Name ("NCCL version", "NCCL
	// network", "NCCL_ALGO set by environment", "NCCL coll channels",
	// "NCCL AllReduce algorithm/protocol") reads Good and Bad.
	DiffNCCL StateDiffKind = "nccl"
	// DiffReported: what the benchmark reported about the software it ran
	// on (Fingerprint.Reported), key Name.
	DiffReported StateDiffKind = "reported"
)

// StateDiff is one way in which the GPU or NCCL state of the two ends of
// a finding differs. The fields a kind uses are listed with the kind.
type StateDiff struct {
	Kind          StateDiffKind `json:"kind"`
	GPU           int           `json:"gpu,omitempty"`
	Step          string        `json:"step,omitempty"`
	Name          string        `json:"name,omitempty"`
	Good          string        `json:"good,omitempty"`
	Bad           string        `json:"bad,omitempty"`
	GoodMHz       float64       `json:"good_mhz,omitempty"`
	BadMHz        float64       `json:"bad_mhz,omitempty"`
	GoodSlowdowns []string      `json:"good_slowdowns,omitempty"`
	BadSlowdowns  []string      `json:"bad_slowdowns,omitempty"`
}
