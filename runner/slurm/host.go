// Package slurm is a Slurm cluster as a runner.Host: each build and
// benchmark step is a job of its own on one of the cluster's nodes, in
// trees that this machine checks out on storage the nodes share.
package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/internal/proc"
)

// Host is a Slurm cluster as a runner.Host. Every command it runs, each build
// and benchmark step of a target, is a Slurm job of its own, started with
// srun on one node (--nodes=1 --ntasks=1) with the configured partition,
// generic resources, time limit and exclusivity; Slots targets are
// measured at once, as that many jobs. Each run records the node its
// benchmark ran on and what Slurm says of it (DescribeNode: CPUs, memory,
// Gres, CfgTRES), and its GPU state is sampled on the node, inside the
// step's job, where nvidia-smi is installed there.
//
// srun rather than sbatch --wait: srun streams the job's output back
// through its own stdout, so the output is captured and capped as it is
// written, exactly like a local command's, and srun returns the moment
// the job ends (sbatch --wait polls the controller, and its output file
// is read only afterwards). The job lives exactly as long as the step.
//
// The trees live on storage that the nodes and this machine share: the
// Local materializes, locks and verifies them on this machine,
// in its own clone under the shared workdir, and the jobs run in them.
// Scratch files (environment dumps, the job's records) are on the same
// storage, so Command.EnvFile written on the node is read back here.
//
// A job's script runs under a small wrapper that writes the node and job
// id when the job starts and the script's exit status when it ends, into
// files of the scratch directory that perfbot creates before it submits
// the job (an existing file's new content is seen through NFS's
// close-to-open consistency, a new file's name may not be). A job that
// Slurm reports COMPLETED (scontrol show job) and whose script reported
// its end is a Result, whatever the script's status: a failing benchmark
// is the target's failure. Any other job (Slurm could not allocate it,
// failed or preempted it, ended it at its time limit, cancelled it on a
// node failure) is an infrastructure failure, submitted again up to
// Retries times and then a *record.InfraError naming the host and the
// job.
//
// A step's timeout runs from the start of its job: time in the queue of
// a busy partition is not the step's. A job that perfbot ends (the step's
// timeout, a cancelled ctx) is scancelled, and Exec returns only once
// squeue no longer lists it. Should perfbot die, the supervisor that srun
// runs under (proc.Supervise) scancels the job at once and kills srun.
//
// A benchmark's server runs in its step's job, on the step's node, and
// ends with it (ExecWithServer): the Host starts no process on perfbot's
// machine, and is no runner.ServerHost.
type Host struct {
	// Local is this machine's side of the host, which holds the trees:
	// its HostName is this host's name, its Repo a clone under the shared
	// Workdir, its Slots the targets measured at once. Its Withheld
	// variables reach no job. The Host does what it does explicitly and
	// nothing else: a Local's commands run on this machine, a Host's on
	// the cluster.
	Local *runner.Local
	// Origin, when Local.Repo is nil, is the repository cloned under
	// Local.Workdir when a tree is first locked: perfbot's own clone.
	Origin string
	// Partition is where jobs go; empty is the cluster's default.
	Partition string
	// Gres are the generic resources of each job ("gpu:8").
	Gres string
	// TimeLimit is each job's Slurm time limit, rounded up to minutes;
	// zero leaves the partition's.
	TimeLimit time.Duration
	// Exclusive asks for whole nodes.
	Exclusive bool
	// SrunArgs are further arguments of every srun.
	SrunArgs []string
	// Retries is how many more times a job that failed on the cluster
	// is submitted: DefaultRetries when zero, none when negative.
	Retries int
	// RetryWait is the pause before a job is submitted again, doubled at
	// each retry; DefaultRetryWait when zero.
	RetryWait time.Duration

	cloneMu sync.Mutex // held while the clone is opened
	nodes   sync.Map   // record.ClusterNode by node name (DescribeNode)
}

var _ runner.Host = (*Host)(nil)

// Name returns the configured name, the Local's.
func (s *Host) Name() string { return s.Local.Name() }

// Layout returns the Local's slots and trees.
func (s *Host) Layout() runner.Layout { return s.Local.Layout() }

// Verify checks the tree as the Local does: it lies on this machine.
func (s *Host) Verify(ctx context.Context, slot, tree int, ws runner.Workspace, src runner.Source) error {
	return s.Local.Verify(ctx, slot, tree, ws, src)
}

func (s *Host) infra(op string, err error) *record.InfraError {
	return &record.InfraError{Host: s.Name(), Op: op, Err: err}
}

func (s *Host) logger() *slog.Logger {
	if s.Local.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Local.Logger
}

func (s *Host) outputCap() int {
	if s.Local.OutputCap > 0 {
		return s.Local.OutputCap
	}
	return runner.DefaultOutputCap
}

// Defaults of a Slurm host.
const (
	DefaultRetries   = 2
	DefaultRetryWait = 5 * time.Second
)

// cancelWait bounds how long Exec waits for a job it cancelled to leave
// squeue: Slurm signals the job's processes, kills them after its
// KillWait (30 s by default) and then lets the job go.
const cancelWait = 2 * time.Minute

// slurmJobVars are variables of perfbot's environment that no srun may
// see: in perfbot's own allocation they would make each command a step of
// that allocation instead of a job of its own.
var slurmJobVars = []string{"SLURM_JOB_ID", "SLURM_JOBID", "SLURM_STEP_ID", "SLURM_STEPID"}

// Exec runs cmd as a Slurm job in slot, and again while the cluster fails
// it, up to Retries times. The read-back of what a benchmark step
// recorded on its node (PhaseReadback) runs on this machine instead: it
// only reads the step's scratch files, which lie on the shared workdir,
// and a job of its own would cost a second allocation per step.
func (s *Host) Exec(ctx context.Context, slot int, cmd runner.Command) (runner.Result, error) {
	if cmd.Env[runner.EnvPhase] == runner.PhaseReadback {
		return s.Local.Exec(ctx, slot, cmd)
	}
	res, _, err := s.run(ctx, slot, cmd, nil)
	return res, err
}

// run runs cmd, with srv before it in the job when srv is set, as Exec
// describes: again while the cluster fails the job.
func (s *Host) run(ctx context.Context, slot int, cmd runner.Command, srv *runner.ServerCommand) (runner.Result, runner.ServerResult, error) {
	wait := s.RetryWait
	if wait <= 0 {
		wait = DefaultRetryWait
	}
	for attempt := 1; ; attempt++ {
		res, sr, err := s.execJob(ctx, slot, cmd, srv)
		var jf *jobFailure
		if !errors.As(err, &jf) {
			return res, sr, err
		}
		if attempt > s.retries() {
			jf.attempts = attempt
			var err error = jf
			if jf.id == "" {
				// No job started at all: the cluster is what fails.
				err = runner.HostDown(jf)
			}
			return res, sr, &record.InfraError{Host: s.Name(), Op: jf.op(), Err: err}
		}
		s.logger().Warn("slurm job failed; submitting it again", "host", s.Name(), "job", jf.id, "name", jf.name, "error", jf.reason, "attempt", attempt)
		select {
		case <-ctx.Done():
			return runner.Result{}, runner.ServerResult{}, ctx.Err()
		case <-time.After(wait):
		}
		wait *= 2
	}
}

func (s *Host) retries() int {
	switch {
	case s.Retries < 0:
		return 0
	case s.Retries == 0:
		return DefaultRetries
	}
	return s.Retries
}

// jobFailure is a job whose script did not report its end.
type jobFailure struct {
	name, id string
	// reason is what srun or slurmstepd said last.
	reason   string
	attempts int
}

func (f *jobFailure) op() string {
	if f.id == "" {
		return "slurm job " + f.name
	}
	return fmt.Sprintf("slurm job %s (%s)", f.id, f.name)
}

func (f *jobFailure) Error() string {
	msg := "the job ended before its script did"
	if f.id == "" {
		msg = "the job never started, or its node does not see the shared workdir"
	}
	if f.reason != "" {
		msg += ": " + f.reason
	}
	if f.attempts > 1 {
		msg += fmt.Sprintf(" (%d attempts)", f.attempts)
	}
	return msg
}

// jobFiles are what a job's wrapper writes, in the scratch directory: the
// node and job id at the start, the script's exit status at the end, and
// for a job with a server, the server's state (ready, then stopped) and
// its output.
type jobFiles struct{ node, exit, ready, server string }

// execJob runs cmd as one job, with srv before it when srv is set. Its
// error is a *jobFailure when the job failed on the cluster.
func (s *Host) execJob(ctx context.Context, slot int, cmd runner.Command, srv *runner.ServerCommand) (runner.Result, runner.ServerResult, error) {
	var none runner.ServerResult
	if err := ctx.Err(); err != nil {
		return runner.Result{}, none, err
	}
	if err := proc.CheckDir(cmd.Dir); err != nil {
		return runner.Result{}, none, s.infra("open working directory", err)
	}
	name := s.jobName(slot)
	files, err := s.createJobFiles(cmd.Scratch, name, srv != nil)
	if err != nil {
		return runner.Result{}, none, s.infra("create job files", err)
	}
	defer files.remove()
	if cmd.EnvFile != "" {
		if cmd.EnvFile, err = filepath.Abs(cmd.EnvFile); err != nil {
			return runner.Result{}, none, s.infra("locate environment dump", err)
		}
		if err := os.Remove(cmd.EnvFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			return runner.Result{}, none, s.infra("remove old environment dump", err)
		}
	}
	base := proc.Withhold(os.Environ(), slices.Concat(runner.DefaultWithheld, s.Local.Withheld, slurmJobVars))
	var sj *serverJob
	if srv != nil {
		if sj, err = newServerJob(*srv, files, base, cmd.Env); err != nil {
			return runner.Result{}, none, s.infra("start the server", err)
		}
	}

	pr, pw, err := os.Pipe()
	if err != nil {
		return runner.Result{}, none, s.infra("create output pipe", err)
	}
	defer pr.Close()
	defer pw.Close()
	c := exec.Command("srun", s.srunArgs(name, cmd.Dir, jobScript(cmd.Script, cmd.EnvFile, files, sj))...)
	c.Env = proc.MergeEnv(base, cmd.Env)
	c.Stdout, c.Stderr = pw, pw
	// Should perfbot die, its supervisor cancels the job as cancel does,
	// and kills srun.
	q := proc.ShellQuote("--name=" + name)
	if err := proc.Supervise(c, "/bin/sh", "-c", "scancel --signal=KILL --full "+q+"; scancel "+q); err != nil {
		return runner.Result{}, none, s.infra("start srun", err)
	}
	if err := c.Start(); err != nil {
		return runner.Result{}, none, s.infra("start srun", err)
	}
	pw.Close()
	out := proc.NewCapture(s.outputCap())
	drained := make(chan struct{})
	go func() {
		_, _ = io.Copy(out, pr)
		close(drained)
	}()
	// The step's clock starts with the job, or once its server is ready.
	stepFile := files.node
	if sj != nil {
		stepFile = files.ready
	}
	res, times, waitErr := s.wait(ctx, c, name, files.node, stepFile, cmd.Timeout)
	select {
	case <-drained:
	case <-time.After(proc.OutputDrainWait):
		pr.Close()
		<-drained
	}
	res.Output, res.Truncated = out.Bytes()
	node, id := readJobStart(files.node)
	res.Node = node
	if cmd.EnvFile != "" {
		res.Env = proc.TakeEnvFile(cmd.EnvFile)
	}
	var sr runner.ServerResult
	if sj != nil {
		if sr, err = sj.result(s.outputCap(), times); err != nil {
			return res, sr, s.infra("start the server", err)
		}
	}
	switch {
	case waitErr != nil:
		return res, sr, waitErr
	case res.TimedOut:
		return res, sr, nil
	}
	code, ok := readExit(files.exit)
	// The wrapper reported its end: the script's exit status, or that the
	// server was not ready and the script did not run.
	reported := ok || sr.Failed != ""
	if id == "" {
		return res, sr, &jobFailure{name: name, reason: proc.LastLine(res.Output)}
	}
	state, err := jobState(id)
	switch {
	case err != nil && reported:
		// Slurm cannot say (its controller went away, the job was
		// purged): the script reported its end, and its wrapper was not
		// signalled.
		s.logger().Warn("slurm does not say how a job ended; its script's exit status stands", "host", s.Name(), "job", id, "error", err)
	case err != nil:
		return res, sr, &jobFailure{name: name, id: id, reason: err.Error()}
	case state.name != "COMPLETED" || !reported:
		reason := "Slurm's state is " + state.String()
		if last := proc.LastLine(res.Output); last != "" {
			reason += ": " + last
		}
		return res, sr, &jobFailure{name: name, id: id, reason: reason}
	}
	res.ExitCode = code
	if sr.Failed != "" {
		res.ExitCode = -1
	}
	return res, sr, nil
}

// slurmState is a job's state as scontrol shows it, with the reason.
type slurmState struct{ name, reason string }

func (s slurmState) String() string {
	if s.reason == "" || s.reason == "None" {
		return s.name
	}
	return s.name + " (" + s.reason + ")"
}

// finalStates are the states a job ends in. The wrapper exits 0, so a job
// that ran its script to the end is COMPLETED; FAILED is a wrapper that
// could not run, the others say what Slurm did to the job.
var finalStates = []string{"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "PREEMPTED", "NODE_FAIL", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY"}

// jobStateWait bounds how long jobState waits for a job whose srun has
// returned to reach its final state (its epilog runs meanwhile).
const jobStateWait = time.Minute

var (
	stateField  = regexp.MustCompile(`\bJobState=(\S+)`)
	reasonField = regexp.MustCompile(`\bReason=(\S+)`)
)

// jobState asks scontrol how job id ended, waiting while it completes.
func jobState(id string) (slurmState, error) {
	deadline := time.Now().Add(jobStateWait)
	for {
		ctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
		out, err := exec.CommandContext(ctx, "scontrol", "--oneliner", "show", "job", id).CombinedOutput()
		stop()
		if err != nil {
			return slurmState{}, fmt.Errorf("scontrol show job %s: %w: %s", id, err, proc.Clip(strings.TrimSpace(string(out)), 200))
		}
		m := stateField.FindSubmatch(out)
		if m == nil {
			return slurmState{}, fmt.Errorf("scontrol show job %s: no JobState in %q", id, proc.Clip(string(out), 200))
		}
		st := slurmState{name: string(m[1])}
		if r := reasonField.FindSubmatch(out); r != nil {
			st.reason = string(r[1])
		}
		if slices.Contains(finalStates, st.name) {
			return st, nil
		}
		if time.Now().After(deadline) {
			return st, fmt.Errorf("job %s is still %s after %s", id, st, jobStateWait)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// jobName names a job uniquely, so that it can be found in squeue and
// cancelled before Slurm has told anyone its id.
func (s *Host) jobName(slot int) string {
	host := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, s.Name())
	return fmt.Sprintf("perfbot-%s-%d-%s", host, slot, proc.NewMark()[:12])
}

// createJobFiles creates the job's empty records in scratch, or in the
// workdir's jobs directory when the command has no scratch directory; the
// server's too when served.
func (s *Host) createJobFiles(scratch, name string, served bool) (jobFiles, error) {
	if scratch == "" {
		if s.Local.Workdir == "" {
			return jobFiles{}, errors.New("no scratch directory and no workdir")
		}
		scratch = filepath.Join(s.Local.Workdir, "jobs")
	}
	dir, err := filepath.Abs(scratch)
	if err != nil {
		return jobFiles{}, err
	}
	// The job's files hold a server's output and the node's environment
	// dump: owner only.
	if err := proc.PrivateDir(dir); err != nil {
		return jobFiles{}, err
	}
	f := jobFiles{node: filepath.Join(dir, name+".node"), exit: filepath.Join(dir, name+".exit")}
	if served {
		f.ready, f.server = filepath.Join(dir, name+".ready"), filepath.Join(dir, name+".server")
	}
	for _, p := range f.paths() {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			return jobFiles{}, err
		}
	}
	return f, nil
}

func (f jobFiles) paths() []string {
	var out []string
	for _, p := range []string{f.node, f.exit, f.ready, f.server} {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (f jobFiles) remove() {
	for _, p := range f.paths() {
		os.Remove(p)
	}
}

// srunArgs are the arguments of the srun that runs script as job name.
func (s *Host) srunArgs(name, dir, script string) []string {
	args := []string{"--quiet", "--nodes=1", "--ntasks=1", "--job-name=" + name}
	if dir != "" {
		args = append(args, "--chdir="+dir)
	}
	if s.Partition != "" {
		args = append(args, "--partition="+s.Partition)
	}
	if s.Gres != "" {
		args = append(args, "--gres="+s.Gres)
	}
	if s.TimeLimit > 0 {
		args = append(args, "--time="+slurmMinutes(s.TimeLimit))
	}
	if s.Exclusive {
		args = append(args, "--exclusive")
	}
	args = append(args, s.SrunArgs...)
	return append(args, "/bin/sh", "-c", script)
}

// slurmMinutes writes d as a Slurm time limit in whole minutes, rounded
// up.
func slurmMinutes(d time.Duration) string {
	return strconv.FormatInt(int64((d+time.Minute-1)/time.Minute), 10)
}

// jobScript wraps script for a job: the wrapper records the node and the
// job id, runs the script (dumping its environment to envFile, as a local
// command does), and records the script's exit status unless the wrapper
// itself was signalled, by scancel, a preemption or the time limit. A
// script killed that way has not failed; its job has, which Slurm's state
// of the job tells for sure (the signal may reach the wrapper only after
// the script died of it). The wrapper exits 0 and keeps its own stderr
// ("Terminated") out of the output, so that the output is the script's
// as a local command's is: the script gets the job's stderr back itself,
// because sh reports a killed child on the stderr of the command that
// started it. With a server (sj), the wrapper starts it first and runs the
// script only once it is ready, and stops it after the script.
func jobScript(script, envFile string, f jobFiles, sj *serverJob) string {
	run := `/bin/sh -c ` + proc.ShellQuote("exec 2>&3 3>&-\n"+proc.WithEnvDump(script, envFile)) + `
code=$?
[ -n "$signalled" ] || printf '%s\n' "$code" > ` + proc.ShellQuote(f.exit) + "\n"
	if sj != nil {
		run = sj.start + "if [ \"$perfbot_ready\" = ready ]; then\n" + run + "fi\n" + sj.stop
	}
	return `exec 3>&2 2> /dev/null
trap 'signalled=1' HUP INT TERM
printf '%s %s\n' "${SLURMD_NODENAME:-$(hostname)}" "$SLURM_JOB_ID" > ` + proc.ShellQuote(f.node) + "\n" + run + "exit 0\n"
}

// readJobStart reads the node and job id a job's wrapper recorded.
func readJobStart(path string) (node, id string) {
	data, _ := os.ReadFile(path)
	f := strings.Fields(string(data))
	if len(f) > 0 {
		node = f[0]
	}
	if len(f) > 1 {
		id = f[1]
	}
	return node, id
}

// readExit reads the script's exit status; ok is false while the file is
// empty: the script never reported its end.
func readExit(path string) (code int, ok bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	code, err = strconv.Atoi(string(bytes.TrimSpace(data)))
	return code, err == nil
}

// jobTimes are when a job started on its node (its wrapper wrote the
// node file) and when its step started (at once, or when its server was
// ready); zero when perfbot did not see it.
type jobTimes struct{ start, step time.Time }

// wait waits for srun to exit, for the timeout or for ctx. The timeout
// runs from the moment the step started (its wrapper wrote stepFile: the
// node file, which it writes first, or the server's ready file): a job
// waiting in the queue of a busy partition, or for its server, is not the
// target's slow step. A job ended by the timeout or ctx is cancelled and
// waited for until squeue no longer lists it; its Result is TimedOut, or
// the error is ctx's. The Result's Duration is the step's run, from its
// start.
func (s *Host) wait(ctx context.Context, c *exec.Cmd, name, nodeFile, stepFile string, timeout time.Duration) (runner.Result, jobTimes, error) {
	exited := make(chan error, 1)
	go func() { exited <- c.Wait() }()
	submitted := time.Now()
	stop := make(chan struct{})
	defer close(stop)
	started, stepped := watchStart(nodeFile, stop), watchStart(stepFile, stop)
	var times jobTimes
	var expired <-chan time.Time
	var res runner.Result
	var ctxErr error
wait:
	for {
		select {
		case <-exited:
			break wait
		case <-started:
			started, times.start = nil, time.Now()
			continue
		case <-stepped:
			stepped, times.step = nil, time.Now()
			if timeout > 0 {
				t := time.NewTimer(timeout)
				defer t.Stop()
				expired = t.C
			}
			continue
		case <-expired:
			res.TimedOut = true
		case <-ctx.Done():
			ctxErr = ctx.Err()
		}
		res.ExitCode = -1
		if err := s.cancel(name, c, exited); err != nil {
			return res, times, s.infra("cancel slurm job "+name, err)
		}
		break
	}
	from := times.step
	switch {
	case from.IsZero() && !times.start.IsZero():
		from = times.start
	case from.IsZero():
		from = submitted
	}
	res.Duration = time.Since(from)
	return res, times, ctxErr
}

// watchStart returns a channel closed once the job's wrapper has written
// file (the node file, which it writes first, or the server's ready
// file); it looks until stop is closed.
func watchStart(file string, stop <-chan struct{}) <-chan struct{} {
	started := make(chan struct{})
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			if fi, err := os.Stat(file); err == nil && fi.Size() > 0 {
				close(started)
				return
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return started
}

// cancel scancels job name until its srun has exited and squeue lists
// it no more. srun may have submitted the job a moment after the first
// scancel looked for it, so scancel is repeated. A job still listed after
// cancelWait is an error; srun is killed then.
func (s *Host) cancel(name string, c *exec.Cmd, exited <-chan error) error {
	deadline := time.Now().Add(cancelWait)
	gone := false
	for {
		ctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
		// SIGKILL first, as a local command's group gets: a job already
		// cancelled takes no more signals, and waits out KillWait.
		_ = exec.CommandContext(ctx, "scancel", "--signal=KILL", "--full", "--name="+name).Run()
		_ = exec.CommandContext(ctx, "scancel", "--name="+name).Run()
		stop()
		if !gone {
			select {
			case <-exited:
				gone = true
			case <-time.After(200 * time.Millisecond):
			}
		}
		if gone {
			listed, err := s.listed(name)
			if err == nil && !listed {
				return nil
			}
			if time.Now().After(deadline) {
				if err == nil {
					err = errors.New("squeue still lists it")
				}
				return fmt.Errorf("after %s: %w", cancelWait, err)
			}
			time.Sleep(200 * time.Millisecond)
			continue
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			<-exited
			gone = true
		}
	}
}

// listed reports whether squeue lists a job named name: pending, running
// or still completing.
func (s *Host) listed(name string) (bool, error) {
	ctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	out, err := exec.CommandContext(ctx, "squeue", "--noheader", "--format=%i", "--name="+name).CombinedOutput()
	if err != nil {
		return false, fmt.Errorf("squeue: %w: %s", err, proc.Clip(strings.TrimSpace(string(out)), 200))
	}
	return len(bytes.TrimSpace(out)) > 0, nil
}

// Lock opens the host's clone on its first call, then locks the tree as
// the Local does.
func (s *Host) Lock(ctx context.Context, slot, tree int) (func(), error) {
	if err := s.openClone(ctx); err != nil {
		return nil, err
	}
	return s.Local.Lock(ctx, slot, tree)
}

// openClone clones Origin under the workdir, or opens and fetches the
// clone made before, unless the Local has its Repo.
func (s *Host) openClone(ctx context.Context) error {
	s.cloneMu.Lock()
	defer s.cloneMu.Unlock()
	if s.Local.Repo != nil || s.Origin == "" {
		return nil
	}
	repo, err := gitops.Open(ctx, s.Origin, s.Local.Workdir)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return s.infra("clone into the shared workdir", err)
	}
	s.Local.Repo = repo
	return nil
}

// Materialize checks src out as the Local does, in the clone under the
// shared workdir, fetching first when the clone lacks the commit (its
// origin, the clone perfbot resolves commits in, may have fetched since).
func (s *Host) Materialize(ctx context.Context, slot, tree int, src runner.Source) (runner.Workspace, error) {
	if err := s.openClone(ctx); err != nil {
		return runner.Workspace{}, err
	}
	if s.Local.Repo != nil {
		if _, err := s.Local.Repo.Resolve(ctx, src.Target.Commit); err != nil {
			if err := s.Local.Repo.Fetch(ctx); err != nil {
				return runner.Workspace{}, s.infra("fetch "+src.Target.Short(), err)
			}
		}
	}
	return s.Local.Materialize(ctx, slot, tree, src)
}

// Facts names the host. The machines are the cluster's nodes, which each
// run records (Run.Node), with what Slurm says of the node
// (DescribeNode) and the GPU state sampled on it during each step.
func (s *Host) Facts(ctx context.Context) (record.Fingerprint, error) {
	fp := record.Fingerprint{Host: s.Name(), OS: "slurm"}
	if s.Partition != "" {
		fp.OS += " partition " + s.Partition
	}
	return fp, nil
}
