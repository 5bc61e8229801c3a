package record

// ClusterNode is the node of a cluster that ran a run, as the cluster's
// scheduler reports it (Slurm: scontrol show node): what was there to
// run on, which a run's own facts, taken inside a job that may see only
// part of the node, do not say.
type ClusterNode struct {
	Name string `json:"name"`
	Arch string `json:"arch,omitempty"`
	OS   string `json:"os,omitempty"`
	// CPUs is the node's CPU count (Slurm's CPUTot).
	CPUs int `json:"cpus,omitempty"`
	// RealMemoryMB is the memory the scheduler counts, in megabytes.
	RealMemoryMB int `json:"real_memory_mb,omitempty"`
	// Gres are the node's generic resources as configured, the GPUs among
	// them ("gpu:h200:8(S:0-1)").
	Gres string `json:"gres,omitempty"`
	// CfgTRES are the node's trackable resources ("cpu=224,mem=2000G,
	// billing=224,gres/gpu=8").
	CfgTRES    string `json:"cfg_tres,omitempty"`
	Features   string `json:"features,omitempty"`
	Partitions string `json:"partitions,omitempty"`
}
