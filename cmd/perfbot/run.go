package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/report"
	"github.com/perfbot/perfbot/service"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/views"
)

// Exit statuses: a contract with scripts (the README lists them).
const (
	exitOK          = 0
	exitInput       = 1   // bad usage, input or configuration
	exitInfra       = 2   // infrastructure failure: retrying later may help
	exitBug         = 3   // an error perfbot did not expect: a bug
	exitCulprit     = 4   // bisect --fail-on-culprit found a confirmed regression
	exitInterrupted = 130 // interrupted (SIGINT or SIGTERM), as shells report it
)

// usageError marks a command-line mistake.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// usageArgs marks an argument-count mistake as a usage error.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// globals are the flags every command takes.
type globals struct {
	config  string
	store   string
	verbose bool
	stdout  io.Writer
	stderr  io.Writer
}

// run is perfbot's main, testable: it parses args, runs the command and
// returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	g := &globals{stdout: stdout, stderr: stderr}
	root := newRoot(g)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	return reportError(stderr, err)
}

// newRoot returns perfbot's command tree, writing to g's stdout and
// stderr.
func newRoot(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "perfbot",
		Short: "Find inference performance regressions and prove where they come from",
		Long: `perfbot measures the commits of a repository with its benchmarks, bisects a
change of a metric to the culprit commit under noise, narrows the culprit
down to the diff hunks that cause it and files an issue with the evidence.

The commands that measure or read the store (measure, history, bisect,
hunks, envbisect, findings, report, triage, nightly, serve) read --config
(default perfbot.yaml in the current directory) and take --store, as does
testbed verify, with the testbed's embedded configuration; demo, parse,
loadgen and testbed init read neither.

--json prints one JSON document on stdout and nothing else; progress goes
to stderr. Exit status: 0 done, whatever the verdict; 1 bad usage, input
or configuration; 2 an infrastructure failure; 3 a bug in perfbot; 4
bisect --fail-on-culprit found a confirmed regression; 130 interrupted.`,
		Example: `  perfbot measure HEAD~1 HEAD --repeats 5
  perfbot bisect --good HEAD~5 --bad HEAD --hunks
  perfbot hunks --worktree
  perfbot --config configs/sglang.yaml history --metric output_tok_s`,
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
		// Required flags and flag groups are checked here, before cobra
		// checks them again, so that a missing or conflicting flag is a
		// usage error (exit status 1) like any other.
		PersistentPreRunE: checkFlags,
	}
	root.SetVersionTemplate("perfbot {{.Version}}\n")
	root.SetOut(g.stdout)
	root.SetErr(g.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	pf := root.PersistentFlags()
	pf.StringVar(&g.config, "config", "", "configuration file (default perfbot.yaml in the current directory)")
	pf.StringVar(&g.store, "store", "", "store file (default: the config's store)")
	pf.BoolVarP(&g.verbose, "verbose", "v", false, "debug logs on stderr")

	root.AddCommand(
		measureCmd(g), historyCmd(g), bisectCmd(g), hunksCmd(g), envbisectCmd(g),
		parseCmd(g), findingsCmd(g), reportCmd(g), demoCmd(g), testbedCmd(g), nightlyCmd(g), serveCmd(g),
		loadgenCmd(g), workCmd(g),
		triageCmd(g), revertCmd(g),
	)
	requireSubcommands(root)
	return root
}

// markRequired declares flags a command cannot run without, and says so
// in their help; checkFlags reports a missing one.
func markRequired(cmd *cobra.Command, names ...string) {
	for _, name := range names {
		if err := cmd.MarkFlagRequired(name); err != nil {
			panic(fmt.Sprintf("%s: %v", cmd.Name(), err)) // a flag that was never declared: a bug
		}
		cmd.Flags().Lookup(name).Usage += " (required)"
	}
}

// checkFlags reports the required flags that are missing (as cobra
// would, naming them as they are typed) and runs cobra's checks of flag
// groups (MarkFlagsMutuallyExclusive and the like), as usage errors that
// point to the command's help.
func checkFlags(cmd *cobra.Command, _ []string) error {
	name := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
	var missing []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if req := f.Annotations[cobra.BashCompOneRequiredFlag]; len(req) > 0 && req[0] == "true" && !f.Changed {
			missing = append(missing, "--"+f.Name)
		}
	})
	if len(missing) > 0 {
		return usagef("%s needs %s (see %s --help)", name, strings.Join(missing, " and "), cmd.CommandPath())
	}
	if err := cmd.ValidateFlagGroups(); err != nil {
		return usagef("%s: %v (see %s --help)", name, err, cmd.CommandPath())
	}
	return nil
}

// requireSubcommands makes every command that only groups others (perfbot
// itself, testbed) refuse what is not one of them: an unknown command or a
// missing one is a usage error naming them, never help printed with exit
// status 0.
func requireSubcommands(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		requireSubcommands(c)
	}
	if !cmd.HasSubCommands() || cmd.Runnable() {
		return
	}
	cmd.Args = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usagef("unknown command %q for %q; its commands: %s", args[0], c.CommandPath(), subcommandNames(c))
		}
		return nil
	}
	cmd.RunE = func(c *cobra.Command, _ []string) error {
		return usagef("%s needs a command: %s (see %s --help)", c.CommandPath(), subcommandNames(c), c.CommandPath())
	}
}

func subcommandNames(cmd *cobra.Command) string {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return strings.Join(names, ", ")
}

// reportError prints err on stderr and returns its exit status; a bug
// says that it is one.
func reportError(stderr io.Writer, err error) int {
	code := exitCode(err)
	if code == exitBug {
		fmt.Fprintf(stderr, "perfbot: internal error (a bug; please report it): %v\n", err)
	} else {
		fmt.Fprintf(stderr, "perfbot: %v\n", err)
	}
	return code
}

// exitCode says what kind of failure err is: input (the configuration,
// the command line, a tracker refusing what it was given), the
// infrastructure (a host, the network, the disk, the store's file, the
// process's limits), or else perfbot's own fault, a bug.
func exitCode(err error) int {
	var ue usageError
	var ie *record.InputError
	var ce *config.Error
	var fe *report.FileError
	switch {
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.Is(err, errCulprit):
		return exitCulprit
	case errors.As(err, &ue), errors.As(err, &ie), errors.As(err, &ce),
		errors.Is(err, store.ErrAmbiguous), errors.Is(err, store.ErrNewerSchema),
		errors.Is(err, gitops.ErrUnknownRevision), errors.Is(err, gitops.ErrAmbiguousRevision),
		errors.Is(err, record.ErrBroken), // an end of the range that does not build
		errors.As(err, &fe):              // the tracker refuses the token, the repository or a redirect
		return exitInput
	case record.IsInfra(err), errors.Is(err, store.ErrLocked), errors.Is(err, store.ErrDamaged),
		errors.Is(err, context.DeadlineExceeded), isEnvironment(err):
		return exitInfra
	default:
		return exitBug
	}
}

// environmentErrnos are the system's answers that say the machine, not
// perfbot, is short of something: disk, quota, descriptors, memory, a
// working device.
var environmentErrnos = []syscall.Errno{
	syscall.ENOSPC, syscall.EDQUOT, syscall.EMFILE, syscall.ENFILE,
	syscall.ENOMEM, syscall.EIO, syscall.EROFS,
}

// isEnvironment reports whether err comes from the machine or the
// network: one of environmentErrnos, or a network error.
func isEnvironment(err error) bool {
	for _, e := range environmentErrnos {
		if errors.Is(err, e) {
			return true
		}
	}
	var ne net.Error
	return errors.As(err, &ne)
}

func (g *globals) logger() *slog.Logger {
	level := slog.LevelWarn
	if g.verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(g.stderr, &slog.HandlerOptions{Level: level}))
}

// loadConfig reads --config, else perfbot.yaml in the current directory.
// Without either it says so: the embedded testbed configuration is what
// `perfbot demo` runs, never a silent stand-in for the user's own.
func (g *globals) loadConfig() (*config.Config, error) {
	path := g.config
	if path == "" {
		if _, err := os.Stat(defaultConfig); err != nil {
			wd, _ := os.Getwd()
			return nil, usagef("no configuration: %s has no %s and --config names none; "+
				"write one for your repository (examples in configs/, keys in docs/configuration.md), or run `perfbot demo` to try perfbot on its bundled testbed", wd, defaultConfig)
		}
		path = defaultConfig
	}
	cfg, err := config.Load(path)
	if err != nil {
		return nil, inputErr(err)
	}
	return cfg, nil
}

// defaultConfig is the configuration file read when --config names none.
const defaultConfig = "perfbot.yaml"

func inputErr(err error) error {
	var ce *config.Error
	if errors.As(err, &ce) {
		return err
	}
	return &record.InputError{Err: err}
}

// The workspace has two doors: open for the commands that measure (package
// service opens the store, the repository, the hosts and the Oracle), and
// openStore for those that only read the store (through package views) or
// triage and file what it holds (a service.Bot over the store alone).

// open loads the configuration and opens the bot that runs jobs.
func (g *globals) open(ctx context.Context) (*service.Bot, error) {
	cfg, err := g.loadConfig()
	if err != nil {
		return nil, err
	}
	return g.openConfig(ctx, cfg)
}

// openConfig opens the bot that runs jobs on cfg.
func (g *globals) openConfig(ctx context.Context, cfg *config.Config) (*service.Bot, error) {
	return service.Open(ctx, cfg, g.options())
}

// storePath is the store the commands use: --store, else the
// configuration's.
func (g *globals) storePath(cfg *config.Config) string {
	if g.store != "" {
		return g.store
	}
	return cfg.Store
}

// errNoStore says that the store file does not exist yet: nothing was
// ever recorded.
var errNoStore = errors.New("no store yet")

// openStore loads the configuration and opens its store alone: no clone
// or fetch of the repository, no host, no Oracle. With existing, a store
// that does not exist yet is not created: the error wraps errNoStore.
func (g *globals) openStore(existing bool) (*config.Config, *store.DB, error) {
	cfg, err := g.loadConfig()
	if err != nil {
		return nil, nil, err
	}
	path := g.storePath(cfg)
	if existing {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s: %w", path, errNoStore)
		}
	}
	db, err := store.Open(path)
	if err != nil {
		return nil, nil, err
	}
	return cfg, db, nil
}

// openViews opens the store for reading; closing its Store releases it.
func (g *globals) openViews(existing bool) (*views.Views, error) {
	cfg, db, err := g.openStore(existing)
	if err != nil {
		return nil, err
	}
	return views.New(cfg, db), nil
}

// openRecords opens the store with its views and a Bot over it that
// triages and files (service.OnStore); closing the Bot releases the
// store.
func (g *globals) openRecords() (*views.Views, *service.Bot, error) {
	cfg, db, err := g.openStore(false)
	if err != nil {
		return nil, nil, err
	}
	return views.New(cfg, db), service.OnStore(cfg, db, g.options()), nil
}

func (g *globals) options() service.Options {
	return service.Options{Store: g.store, Progress: g.stderr, Logger: g.logger(), Version: version()}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
