// Package runner knows where and how a target is measured. It decides no
// verdicts.
//
// Where: a Pool of Hosts (this machine, Local; a machine reached over
// SSH, package runner/ssh, which keeps its own clone and gets the commits
// it lacks as bundles; a Slurm cluster, package runner/slurm, whose jobs
// run in trees on storage its nodes share) hands out leases, each one slot
// of one host. A host has Layout().Slots slots, and the pool's Size, the
// number of targets measured at once, is the sum over its hosts. Each
// slot keeps a few materialized trees and the pool remembers which target
// each holds built, so a lease for a target goes back to its built tree
// whenever that slot is free. A caller that compares runs of one host
// names it (Pool.AcquireOn: a slot of that host only; Pool.Slots lists
// where Size leases can go), and every run records the host that ran it.
// Materializing a target (its commit, with
// its hunks applied) is the host's job, and so are the tree's scratch
// files, which live under the host's workdir. A lease locks its tree on
// the host, so that two perfbot processes sharing a workdir never measure
// in one tree at once, and every run verifies that the tree it ran in is
// its target before it is recorded: a mismatch is an infrastructure
// failure, never a sample.
//
// A host that keeps failing leaves the pool: after Policy.MaxFailures
// failures of its own in a row (unreachable, key refused, connection
// dropped: ErrHostDown) it gets no lease until a cool-down has passed or
// Pool.Retry, and when no host is left a lease fails naming every host
// and why (pool_health.go).
//
// How: a Runner runs a Spec's build steps and benchmark steps on a lease,
// with timeouts that kill whole process groups, a supervisor that kills
// all a step started the moment perfbot dies, captured logs capped to
// their head and tail, and the environment fingerprint of every run. On a
// host whose facts list GPUs, each benchmark step is sampled on the host
// itself by nvidia-smi about once a second (started by a prologue of the
// step's script, so that every kind of host does it through Exec), and the
// run records each GPU as the step found it, a summary of its samples
// (clocks, temperature, power, utilization, throttle reasons), the
// topology, the NCCL configuration files and what NCCL_DEBUG=INFO lines of
// the output say (gpustate.go); on a cluster (a NodeDescriber) every
// benchmark step is sampled so, on its node, and the run records what the
// cluster says of that node. A benchmark step may declare a server
// (record.Server), which the Runner starts on a host that can run one
// beside the step (ServerHost: Local), waits for, and stops with its whole
// process group after the step, checking its port free; a host whose
// steps run on machines perfbot does not reach runs the server in the
// step's own job instead, on the step's machine (ServerJobHost: Slurm).
// A host that cannot do its part fails with a *record.InfraError; a target
// that does not apply, build or benchmark is a recorded run status.
package runner
