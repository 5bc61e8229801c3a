package runner

import (
	"context"
	"errors"
	"time"

	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/record"
)

// Host is a machine that builds and benchmarks targets: a local machine,
// an ssh host, a Slurm cluster. It gives Layout().Slots leases at once;
// each slot keeps Layout().Trees materialized trees (checkouts), so a
// target measured again finds its build in place. A Pool hands the slots
// out; the Runner uses them.
//
// Paths in a Workspace and a Command are paths on the host. Every error
// of a Host that is not the target's fault (an unreachable host, a full
// disk, a checkout that git refused) is a *record.InfraError; a hunk that
// does not apply is a *gitops.ApplyError, the target's fault.
type Host interface {
	// Name is the host's configured name, recorded with every run.
	Name() string
	// Layout is how many slots the host has and how many trees each
	// slot keeps.
	Layout() Layout
	// Materialize makes tree number tree of slot an exact, clean copy of
	// src (its commit with its hunks applied, nothing else: no output of
	// an earlier build survives) and returns where it lies, with the
	// slot's scratch directory.
	Materialize(ctx context.Context, slot, tree int, src Source) (Workspace, error)
	// Lock takes tree of slot for this process until release is called.
	// Another perfbot process sharing the host's workdir that wants the
	// tree waits, and after the host's wait fails with a
	// *record.InfraError naming the holder; so does this one. The pool
	// locks the tree of every lease before handing it out.
	Lock(ctx context.Context, slot, tree int) (release func(), err error)
	// Verify checks that ws, which Materialize made of src in tree of
	// slot, still is exactly that: no checkout since, the commit, the
	// hunks. A tree that is not src is an error wrapping ErrTreeChanged.
	Verify(ctx context.Context, slot, tree int, ws Workspace, src Source) error
	// Exec runs cmd in slot to completion, timeout or cancellation. A
	// command that fails, times out or prints garbage is a Result, not an
	// error: the error is only for a host that could not run the command
	// at all, and is then a *record.InfraError (or ctx's error).
	Exec(ctx context.Context, slot int, cmd Command) (Result, error)
	// Facts describes the machine (no Env); hosts compute it once.
	Facts(ctx context.Context) (record.Fingerprint, error)
}

// ErrTreeChanged is wrapped by Host.Verify when a tree no longer holds the
// target it was materialized for: another process checked it out, or a
// step moved its HEAD or rewrote a hunk's file.
var ErrTreeChanged = errors.New("the tree does not hold the target")

// Layout is the shape of a host: Slots targets are measured on it at
// once, and each slot keeps up to Trees of them materialized and built.
// Slots is what the host adds to a Pool's size; Trees spares rebuilding
// when measurements alternate between targets (both ends of a comparison,
// A B A B).
type Layout struct {
	Slots int
	Trees int
}

// DefaultTrees is the number of trees a slot keeps unless its host says
// otherwise (hosts[].trees): what a bisection of about fifty commits
// builds (its two ends and five or six probes, the culprit and its parent
// among them), so that none of them is built twice; a longer range builds
// about one more commit per doubling, and the tree used least recently is
// given up. Fewer would give up the good end before the check for a
// second change measures it again.
const DefaultTrees = 8

// Source is what a host materializes: a target's commit, with the hunks
// of Patch the target names applied on top. The target's environment
// does not change the tree; it is applied to benchmark steps.
type Source struct {
	Target record.Target
	// Patch holds the hunks Target.Hunks names; nil when it names none.
	Patch *gitops.Patch
}

// Workspace is a materialized tree on a host.
type Workspace struct {
	// Dir is the tree, where build and benchmark steps run.
	Dir string
	// Scratch is a directory of the tree, outside it and under the host's
	// workdir, for perfbot's own files: the environment dumps and the
	// records of running commands. It is its owner's only (0700): a dump
	// holds the benchmark's tokens in clear until it is read.
	Scratch string
	// Stamp names this materialization for Verify; every Materialize of
	// the tree, by any process, makes a new one.
	Stamp string
}

// Command is one shell script run on a host.
type Command struct {
	// Dir is the working directory; it must exist.
	Dir string
	// Script is run by sh -c.
	Script string
	// Env is added to the host's environment, replacing variables of the
	// same name. The host's environment lacks perfbot's own secrets (see
	// Local.Withheld); Env is given whole.
	Env map[string]string
	// Timeout bounds the run; zero means only ctx bounds it.
	Timeout time.Duration
	// EnvFile, when set, names a file on the host where the environment
	// the script's benchmark saw is written (NUL-separated KEY=VALUE, as
	// env -0 writes it): the script's exported environment when it exits,
	// so that what it exports itself counts, readable by its owner only;
	// the host returns it in Result.Env and removes the file.
	EnvFile string
	// Scratch, when set, is the directory on the host for perfbot's files
	// about the command (the record of its process group).
	Scratch string
}

// Result is what a command did.
type Result struct {
	// Output is stdout and stderr interleaved, capped while it is
	// written: when the output was longer, its head and tail are kept and
	// Truncated is set.
	Output    []byte
	Truncated bool
	// ExitCode is the script's exit status; 128+n when signal n ended it,
	// and -1 when it timed out or was cancelled.
	ExitCode int
	TimedOut bool
	Duration time.Duration
	// Env is the environment the script's benchmark saw, read back from
	// Command.EnvFile; nil when EnvFile was empty or unreadable.
	Env map[string]string
	// Node is the machine of a cluster that ran the command; empty on a
	// host that is one machine.
	Node string
}

// treeKey names what a tree holds: the target without its environment,
// which only benchmark steps see. Targets that differ only in their
// environment share one build.
func treeKey(t record.Target) string {
	t.Env = nil
	return t.Key()
}

// NodeDescriber is a host of several machines (a cluster's nodes) that
// says what the node a command ran on (Result.Node) is. The Runner
// records it in the fingerprint of the runs that ran there, and samples
// the GPU state of every benchmark step on such a host: what its node
// has is known only once the step ran there.
type NodeDescriber interface {
	DescribeNode(ctx context.Context, node string) (record.ClusterNode, error)
}
