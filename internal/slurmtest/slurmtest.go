// Package slurmtest starts a real single-node Slurm cluster for tests:
// munged, slurmctld and slurmd (Debian's munge and slurm-wlm) on this
// machine, with a minimal slurm.conf (its node declares two GPUs, Gres,
// whose device files are empty files: Slurm counts and reports them, and
// no job needs them) in a temporary directory, its own
// munge key and socket, and free ports, so that test binaries of several
// packages can run their clusters at once. The cluster starts on the first
// Start of a test binary and stops when its TestMain's Main returns; the
// client commands (srun, squeue, scancel) find it through SLURM_CONF,
// which Start sets in the process's environment.
//
// Without slurm installed a test that needs the cluster is skipped, unless
// the variable CI is set: in CI it fails, so that a missing package never
// passes for a passing test.
package slurmtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Node is the name of the cluster's one node.
const Node = "localhost"

// Partition is the cluster's one partition, the default.
const Partition = "debug"

// Gres are the generic resources of the node as slurm.conf declares
// them: two GPUs of a made-up type, which no job needs to ask for.
const Gres = "gpu:fake:2"

// Cluster is a running single-node Slurm.
type Cluster struct {
	// Dir holds the configuration, state, logs and munge socket.
	Dir string
	// Conf is the slurm.conf; SLURM_CONF names it.
	Conf string
	// CPUs is the node's CPU count, the jobs that can run at once.
	CPUs int

	daemons []*exec.Cmd
}

// programs are what the cluster needs installed.
var programs = []string{"munged", "slurmctld", "slurmd", "srun", "squeue", "scancel", "sinfo"}

var (
	once    sync.Once
	cluster *Cluster
	failure error
	missing string
)

// Start returns the test binary's cluster, starting it on the first
// call. Without slurm installed it skips t, or fails it when CI is set;
// a cluster that does not start fails t.
func Start(t testing.TB) *Cluster {
	t.Helper()
	once.Do(func() {
		for _, p := range programs {
			if _, err := exec.LookPath(p); err != nil {
				missing = p
				return
			}
		}
		cluster, failure = start()
	})
	switch {
	case missing != "" && os.Getenv("CI") != "":
		t.Fatalf("slurm is not installed (%s is missing); .ci/run installs slurm-wlm and munge", missing)
	case missing != "":
		t.Skipf("slurm is not installed (%s is missing): apt-get install slurm-wlm munge", missing)
	case failure != nil:
		t.Fatalf("start slurm: %v", failure)
	}
	return cluster
}

// Main runs the tests of m and then stops the cluster, if one started.
// Call it from TestMain (or call Stop from a TestMain that does more).
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop stops the test binary's cluster, if one started.
func Stop() {
	if cluster != nil {
		cluster.stop()
	}
}

func start() (*Cluster, error) {
	dir, err := os.MkdirTemp("", "slurmtest-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, Conf: filepath.Join(dir, "slurm.conf"), CPUs: runtime.NumCPU()}
	if err := c.boot(); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) boot() error {
	for _, d := range []string{"state", "spool"} {
		if err := os.MkdirAll(filepath.Join(c.Dir, d), 0o700); err != nil {
			return err
		}
	}
	key := make([]byte, 1024)
	_, _ = rand.Read(key)
	if err := os.WriteFile(filepath.Join(c.Dir, "munge.key"), key, 0o600); err != nil {
		return err
	}
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	if err := os.WriteFile(c.Conf, []byte(c.config(ports[0], ports[1])), 0o644); err != nil {
		return err
	}
	// The node's GPUs are empty files: Slurm schedules and reports them,
	// and with task/none nothing binds to them.
	for _, f := range []string{"gpu0", "gpu1"} {
		if err := os.WriteFile(filepath.Join(c.Dir, f), nil, 0o644); err != nil {
			return err
		}
	}
	gres := "NodeName=" + Node + " Name=gpu Type=fake File=" + filepath.Join(c.Dir, "gpu[0-1]") + "\n"
	if err := os.WriteFile(filepath.Join(c.Dir, "gres.conf"), []byte(gres), 0o644); err != nil {
		return err
	}
	os.Setenv("SLURM_CONF", c.Conf)

	p := func(name string) string { return filepath.Join(c.Dir, name) }
	if err := c.daemon("munged", "-F", "-f", "--socket="+p("munge.socket"), "--key-file="+p("munge.key"),
		"--pid-file="+p("munged.pid"), "--seed-file="+p("munged.seed"), "--log-file="+p("munged.log")); err != nil {
		return err
	}
	if err := waitFor(10*time.Second, func() bool { _, err := os.Stat(p("munge.socket")); return err == nil }); err != nil {
		return fmt.Errorf("munged made no socket: %w\n%s", err, c.logs())
	}
	if err := c.daemon("slurmctld", "-D", "-i", "-f", c.Conf); err != nil {
		return err
	}
	if err := c.daemon("slurmd", "-D", "-N", Node, "-f", c.Conf); err != nil {
		return err
	}
	if err := waitFor(60*time.Second, c.idle); err != nil {
		return fmt.Errorf("the node did not become idle: %w\n%s", err, c.logs())
	}
	return nil
}

// config is a minimal slurm.conf: one node of this machine's CPUs and
// the GPUs of Gres, one default partition, no accounting, no cgroups.
func (c *Cluster) config(ctldPort, slurmdPort int) string {
	p := func(name string) string { return filepath.Join(c.Dir, name) }
	return strings.Join([]string{
		"ClusterName=perfbottest",
		"SlurmctldHost=localhost(127.0.0.1)",
		fmt.Sprintf("SlurmctldPort=%d", ctldPort),
		fmt.Sprintf("SlurmdPort=%d", slurmdPort),
		"AuthType=auth/munge",
		"CredType=cred/munge",
		"AuthInfo=socket=" + p("munge.socket"),
		"SlurmUser=root",
		"SlurmdUser=root",
		"StateSaveLocation=" + p("state"),
		"SlurmdSpoolDir=" + p("spool"),
		"SlurmctldPidFile=" + p("slurmctld.pid"),
		"SlurmdPidFile=" + p("slurmd.pid"),
		"SlurmctldLogFile=" + p("slurmctld.log"),
		"SlurmdLogFile=" + p("slurmd.log"),
		"ProctrackType=proctrack/linuxproc",
		"TaskPlugin=task/none",
		"SelectType=select/cons_tres",
		// Cores only: with memory as a resource each job would take the
		// whole node's.
		"SelectTypeParameters=CR_Core",
		"ReturnToService=2",
		"MpiDefault=none",
		"JobAcctGatherType=jobacct_gather/none",
		"AccountingStorageType=accounting_storage/none",
		"KillWait=1",
		"GresTypes=gpu",
		fmt.Sprintf("NodeName=%s NodeAddr=127.0.0.1 CPUs=%d Gres=%s State=UNKNOWN", Node, c.CPUs, Gres),
		fmt.Sprintf("PartitionName=%s Default=YES Nodes=%s MaxTime=INFINITE State=UP", Partition, Node),
		"",
	}, "\n")
}

// daemon starts a daemon in the foreground, as a child that the kernel
// terminates should the test binary die first.
func (c *Cluster) daemon(name string, args ...string) error {
	out, err := os.Create(filepath.Join(c.Dir, name+".out"))
	if err != nil {
		return err
	}
	defer out.Close()
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.Conf)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	c.daemons = append(c.daemons, cmd)
	return nil
}

// idle reports whether sinfo shows the node idle.
func (c *Cluster) idle() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "sinfo", "--noheader", "--Node", "--format=%T").Output()
	return err == nil && strings.TrimSpace(string(out)) == "idle"
}

// Queue returns the jobs squeue lists (pending, running, completing), a
// line each, "ID NAME STATE".
func (c *Cluster) Queue() ([]string, error) {
	out, err := exec.Command("squeue", "--noheader", "--format=%i %j %T").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("squeue: %w: %s", err, bytes.TrimSpace(out))
	}
	var jobs []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			jobs = append(jobs, l)
		}
	}
	return jobs, nil
}

// logs are the last lines of every daemon's log, for a failure message.
func (c *Cluster) logs() string {
	var b strings.Builder
	for _, name := range []string{"munged.out", "slurmctld.out", "slurmctld.log", "slurmd.out", "slurmd.log"} {
		data, err := os.ReadFile(filepath.Join(c.Dir, name))
		if err != nil || len(data) == 0 {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		fmt.Fprintf(&b, "== %s\n%s\n", name, strings.Join(lines[max(0, len(lines)-15):], "\n"))
	}
	return b.String()
}

// stop terminates the daemons, slurmd first, and removes the directory.
func (c *Cluster) stop() {
	for i := len(c.daemons) - 1; i >= 0; i-- {
		d := c.daemons[i]
		_ = syscall.Kill(-d.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = d.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-d.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	os.RemoveAll(c.Dir)
}

// freePorts returns n ports of 127.0.0.1 that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func waitFor(limit time.Duration, ok func() bool) error {
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			return errors.New("gave up after " + limit.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}
