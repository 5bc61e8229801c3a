package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/service"
	"github.com/perfbot/perfbot/store"
)

// Exit statuses: a contract with scripts (DESIGN.md §8).
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
	root := &cobra.Command{
		Use:           "perfbot",
		Short:         "Find inference performance regressions and prove where they come from",
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("perfbot {{.Version}}\n")
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	pf := root.PersistentFlags()
	pf.StringVar(&g.config, "config", "", "configuration file (default perfbot.yaml in the current directory)")
	pf.StringVar(&g.store, "store", "", "store file (default: the config's store)")
	pf.BoolVarP(&g.verbose, "verbose", "v", false, "debug logs on stderr")

	root.AddCommand(
		measureCmd(g), historyCmd(g), bisectCmd(g), hunksCmd(g), envbisectCmd(g),
		parseCmd(g), findingsCmd(g), reportCmd(g), demoCmd(g), testbedCmd(g), nightlyCmd(g), serveCmd(g),
		loadgenCmd(g),
		triageCmd(g),
	)
	requireSubcommands(root)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	return reportError(stderr, err)
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

// exitCode says what kind of failure err is. Only a *record.InfraError
// (and a store held by another process) is infrastructure; an error no
// rule names is perfbot's own fault, not the host's.
func exitCode(err error) int {
	var ue usageError
	var ie *service.InputError
	var ce *config.Error
	switch {
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.Is(err, errCulprit):
		return exitCulprit
	case errors.As(err, &ue), errors.As(err, &ie), errors.As(err, &ce),
		errors.Is(err, store.ErrAmbiguous), errors.Is(err, store.ErrNewerSchema),
		errors.Is(err, gitops.ErrUnknownRevision), errors.Is(err, gitops.ErrAmbiguousRevision),
		errors.Is(err, bisect.ErrBroken): // an end of the range that does not build
		return exitInput
	case record.IsInfra(err), errors.Is(err, store.ErrLocked), errors.Is(err, context.DeadlineExceeded):
		return exitInfra
	default:
		return exitBug
	}
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
				"write one for your repository (examples in configs/, keys in README.md), or run `perfbot demo` to try perfbot on its bundled testbed", wd, defaultConfig)
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
	return &service.InputError{Err: err}
}

// The workspace has two doors, both in package service: open for the
// commands that measure (the repository, a host and the Oracle),
// openRecords for those that only read the store or file what it holds.
// No command opens the store itself.

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

// openRecords loads the configuration and opens its store alone.
func (g *globals) openRecords() (*service.Bot, error) {
	cfg, err := g.loadConfig()
	if err != nil {
		return nil, err
	}
	return service.OpenRecords(cfg, g.options())
}

// openExistingRecords is openRecords for a reader that must not create a
// store: without one the error wraps service.ErrNoStore.
func (g *globals) openExistingRecords() (*service.Bot, error) {
	cfg, err := g.loadConfig()
	if err != nil {
		return nil, err
	}
	opts := g.options()
	opts.Existing = true
	return service.OpenRecords(cfg, opts)
}

func (g *globals) options() service.Options {
	return service.Options{Store: g.store, Progress: g.stderr, Logger: g.logger(), Version: version()}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
