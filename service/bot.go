// Package service is perfbot's write side: what measures, queues and
// files. The schedule (serve.go) starts a nightly cycle (nightly.go) on
// the configured cron; the cycle measures the branch tip beside the
// reference, records the night and enqueues an alert job for each change
// that detection raises. The persisted queue (queue.go) runs the jobs of
// the table in jobs.go (alert, bisect, hunks, envbisect, revert, and the
// nightly cycle itself), each resumable from what it stored. The revert
// job (revert.go) proves a culprit by undoing it on today's tip, and the
// nightly enqueues it again for findings whose proof has aged
// (recheck.go). A bisection that continues into its culprits' hunks
// also descends into a dependency a culprit bumps (descent.go): the
// dependency's versions, then its commits, bisected by the same engine.
// Every measurement
// goes through one door, the Oracle, which looks in the store first and
// runs only what is missing on the pool of hosts. Findings are filed as
// issues (file.go); a person's triage can move the nightly baseline
// (triage.go).
//
// The engines decide: detect which nights changed, bisect which commit
// did it, minimize which hunks or variables; this package orchestrates
// them, feeding them measurements and turning their results into
// findings. Reading what was recorded is package views, which this
// package does not import; the demo over the bundled testbed is package
// demo.
package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/runner/ssh"
	"github.com/perfbot/perfbot/secret"
	"github.com/perfbot/perfbot/store"
)

// Bot is an opened perfbot workspace: the configuration, the store, the
// clone of the watched repository and the Oracle that measures in it.
type Bot struct {
	Config *config.Config
	Store  *store.DB
	Repo   *gitops.Repo
	Oracle *Oracle
	// Progress receives one human line per measurement step (stderr).
	Progress io.Writer
	Logger   *slog.Logger
	// Version is perfbot's version, which findings name.
	Version string

	clock func() time.Time
	// job is the job this Bot runs for (see runJob): its progress lines
	// go to the job's trace too.
	job *jobRun
}

// Options configures Open and OnStore.
type Options struct {
	// Store overrides the configured store path.
	Store string
	// Progress receives progress lines; nil discards them.
	Progress io.Writer
	Logger   *slog.Logger
	// Host overrides the configured hosts (tests pass a fake).
	Host runner.Host
	// Hosts, when Host is nil, override the configured hosts too.
	Hosts []runner.Host
	// Clock tells the time of job records, traces, findings and costs;
	// nil is time.Now.
	Clock func() time.Time
	// Version is perfbot's version, which findings name.
	Version string
}

// Open opens the store, clones or fetches the repository and prepares the
// Oracle: a Bot that runs jobs. OnStore makes one over a store alone.
// Close releases the store.
func Open(ctx context.Context, cfg *config.Config, opts Options) (*Bot, error) {
	opts.defaults()
	db, err := openStore(cfg, opts)
	if err != nil {
		return nil, err
	}
	repo, err := gitops.Open(ctx, cfg.Repo.URL, cfg.Workdir)
	if err != nil {
		db.Close()
		return nil, repoError(cfg.Repo.URL, err)
	}
	hosts := []runner.Host{opts.Host}
	switch {
	case opts.Host == nil && len(opts.Hosts) > 0:
		hosts = opts.Hosts
	case opts.Host == nil:
		hosts, err = newHosts(cfg, repo, opts.Logger)
	}
	var pool *runner.Pool
	if err == nil {
		pool, err = runner.NewPool(hosts...)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	pool.SetPolicy(runner.Policy{MaxFailures: cfg.Pool.MaxFailures, Cooldown: cfg.Pool.Cooldown, Now: opts.Clock})
	r := &runner.Runner{Spec: cfg.Spec(), Logger: opts.Logger, EnvKeep: cfg.Fingerprint.Env, Secrets: secretValues(cfg)}
	return &Bot{
		Config:   cfg,
		Store:    db,
		Repo:     repo,
		Oracle:   NewOracle(db, pool, r, OracleOptions{Logger: opts.Logger}),
		Progress: opts.Progress,
		Logger:   opts.Logger,
		Version:  opts.Version,
		clock:    opts.Clock,
	}, nil
}

// Close closes the store.
func (b *Bot) Close() error { return b.Store.Close() }

// newHosts returns the configured hosts, each kind from its package:
// local hosts (runner.Local) check their trees out of repo, the one clone,
// each taking its own worktree numbers; ssh hosts (runner/ssh) and slurm
// hosts (runner/slurm) keep theirs in their own workdirs. A kind that
// cannot measure is a configuration mistake named with its host. log hears
// of a tree that another perfbot process holds.
func newHosts(cfg *config.Config, repo *gitops.Repo, log *slog.Logger) ([]runner.Host, error) {
	specs := cfg.Hosts
	if len(specs) == 0 {
		specs = []config.Host{{Name: "local", Kind: config.HostLocal}}
	}
	var hosts []runner.Host
	firstTree := 0
	for _, h := range specs {
		switch h.Kind {
		case config.HostSSH:
			hosts = append(hosts, newSSHHost(h, repo, log))
		case config.HostSlurm: // its own clone, on the shared workdir
			s, err := newSlurm(cfg, h, repo, log)
			if err != nil {
				return nil, err
			}
			hosts = append(hosts, s)
		case "", config.HostLocal:
			if h.Workdir != "" && filepath.Clean(h.Workdir) != filepath.Clean(cfg.Workdir) {
				return nil, &record.InputError{Err: fmt.Errorf("host %s: a local host keeps its trees in the workdir %s; a workdir of its own (%s) is not supported yet", h.Name, cfg.Workdir, h.Workdir)}
			}
			l := &runner.Local{HostName: h.Name, Repo: repo, Workdir: cfg.Workdir, FirstTree: firstTree, Slots: h.Slots, Trees: h.Trees, Logger: log,
				Withheld: perfbotSecrets(cfg)}
			lay := l.Layout()
			firstTree += lay.Slots * lay.Trees
			hosts = append(hosts, l)
		default:
			return nil, &record.InputError{Err: fmt.Errorf("host %s: kind %q is not supported: local, ssh and slurm hosts measure", h.Name, h.Kind)}
		}
	}
	return hosts, nil
}

// newSSHHost is the runner for a configured ssh host: its trees live in
// its own workdir on the host, so it shares no tree numbers with the
// local hosts.
func newSSHHost(h config.Host, repo *gitops.Repo, log *slog.Logger) *ssh.Host {
	return &ssh.Host{HostName: h.Name, Address: h.Address, User: h.User, KeyFile: h.KeyFile,
		KnownHosts: h.KnownHosts, InsecureIgnoreHostKey: h.InsecureIgnoreHostKey,
		Workdir: h.Workdir, Repo: repo, Slots: h.Slots, Trees: h.Trees, Logger: log}
}

// perfbotSecrets names the variables of perfbot's own environment that
// hold its credentials, which build and benchmark processes never get
// (besides runner.DefaultWithheld): the GitHub token's, the API token's
// and those the configuration lists under secrets.
func perfbotSecrets(cfg *config.Config) []string {
	var names []string
	for _, n := range append([]string{cfg.GitHub.TokenEnv, cfg.Serve.TokenEnv}, cfg.Secrets...) {
		if n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// secretValues are the values every text perfbot keeps or sends is
// scrubbed of: those of variables with secret names (secret.FromEnv), and
// those of the variables perfbotSecrets names, whatever their names.
func secretValues(cfg *config.Config) []string {
	values := secret.FromEnv(os.Environ())
	for _, n := range perfbotSecrets(cfg) {
		if v := os.Getenv(n); len(v) >= secret.MinLength {
			values = append(values, v)
		}
	}
	return values
}

// progressf prints one progress line and adds it to the running job's
// trace.
func (b *Bot) progressf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	fmt.Fprintln(b.Progress, line)
	b.trace(line)
}

// now is the Bot's clock.
func (b *Bot) now() time.Time {
	if b.clock == nil {
		return time.Now()
	}
	return b.clock()
}

// resolve resolves rev and records the commit's metadata in the store.
func (b *Bot) resolve(ctx context.Context, rev string) (record.Commit, error) {
	c, err := b.Repo.Resolve(ctx, rev)
	if err != nil {
		return record.Commit{}, &record.InputError{Err: err}
	}
	return c, b.putCommit(c)
}

func (b *Bot) putCommit(c record.Commit) error {
	return b.Store.PutCommit(c)
}

// metric returns the configured metric by name ("" is the primary); an
// unknown name is the user's mistake.
func (b *Bot) metric(name string) (record.Metric, error) {
	m, err := b.Config.Metric(name)
	if err != nil {
		return record.Metric{}, &record.InputError{Err: err}
	}
	return m, nil
}

// meter measures what one job cost: the Oracle's runs and builds since it
// started, and its wall time.
type meter struct {
	b              *Bot
	start          time.Time
	runs0, builds0 int
}

func (b *Bot) startMeter() meter {
	runs, builds := b.Oracle.Counts()
	return meter{b: b, start: b.now(), runs0: runs, builds0: builds}
}

// read is what was measured since the meter started.
func (m meter) read() record.Cost {
	if m.b == nil { // not started: the queue's record of a job
		return record.Cost{}
	}
	r, bu := m.b.Oracle.Counts()
	return record.Cost{Runs: r - m.runs0, Builds: bu - m.builds0, WallSeconds: m.b.now().Sub(m.start).Seconds()}
}

// repoError says whose fault a repository that does not open is: with no
// repo.url, or a local path where there is nothing, the configuration's;
// a clone URL git could not fetch from, the network's or the remote's.
// Anything else (the workdir) keeps its own kind.
func repoError(url string, err error) error {
	var exit *exec.ExitError
	switch {
	case url == "":
		return &record.InputError{Err: errors.New("repo.url is missing: name the repository to watch (a local path or a clone URL)")}
	case gitops.IsLocalPath(url):
		if _, serr := os.Stat(url); errors.Is(serr, fs.ErrNotExist) {
			return &record.InputError{Err: fmt.Errorf("repo.url %s: no such repository: %w", url, serr)}
		}
	case errors.As(err, &exit):
		return &record.InfraError{Op: "open repository " + url, Err: err}
	}
	return fmt.Errorf("open repository %s: %w", url, err)
}
