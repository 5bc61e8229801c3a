package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/demo"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/testbed"
)

func testbedCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "testbed",
		Short: "The bundled testbeds: a small Go inference engine, or with --gpu a PyTorch one, with a history of known changes",
		Long: `testbed generates the bundled testbeds (init) and checks that their injected
changes measure as intended (verify). The Go engine is what perfbot demo
runs on; the PyTorch one (init --gpu) is measured by configs/gpu-testbed.yaml.`,
		Example: `  perfbot testbed init /tmp/tb/testbed
  perfbot testbed verify /tmp/tb/testbed --repeats 10`,
	}
	cmd.AddCommand(testbedInitCmd(g), testbedVerifyCmd(g))
	return cmd
}

func testbedInitCmd(g *globals) *cobra.Command {
	var (
		seed int64
		gpu  bool
	)
	cmd := &cobra.Command{
		Use:   "init DIR",
		Short: "Generate the testbed repository in DIR and its ground-truth manifest beside it",
		Long: `init generates the testbed repository in DIR (a git repository with a history
of known changes, the same for the same --seed) and its ground truth in
DIR.manifest.json: each injected change with its commit, kind and intended
effect. --gpu generates the PyTorch testbed instead of the Go engine.`,
		Example: `  perfbot testbed init /tmp/tb/testbed --seed 1
  perfbot testbed init --gpu /tmp/gt/gpu-testbed`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			generate := testbed.Generate
			if gpu {
				generate = testbed.GenerateGPU
			}
			m, err := generate(cmd.Context(), args[0], seed)
			if err != nil {
				return inputErr(err)
			}
			fmt.Fprintf(g.stdout, "generated %s: %d commits, head %s, in %.1fs; manifest %s\n",
				args[0], m.Commits, record.ShortHash(m.Head), time.Since(start).Seconds(), testbed.ManifestPath(args[0]))
			for _, c := range m.Changes {
				fmt.Fprintf(g.stdout, "  %s %-12s #%-4d %s %s\n", c.ID, c.Kind, c.Index, record.ShortHash(c.Commit), c.Subject)
			}
			return nil
		},
	}
	cmd.Flags().Int64Var(&seed, "seed", 1, "seed of the history")
	cmd.Flags().BoolVar(&gpu, "gpu", false, "the PyTorch testbed (configs/gpu-testbed.yaml measures it) instead of the Go engine")
	return cmd
}

func testbedVerifyCmd(g *globals) *cobra.Command {
	var repeats int
	cmd := &cobra.Command{
		Use:   "verify DIR",
		Short: "Measure every ground-truth change against its parent and print measured beside intended effects",
		Long: `verify measures each change of DIR's manifest (DIR.manifest.json) against its
parent, --repeats runs each, interleaved, with the testbed's embedded
configuration, and prints the measured effect beside the intended one.`,
		Example: `  perfbot testbed verify /tmp/tb/testbed --repeats 10`,
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if repeats < 2 {
				return usagef("--repeats must be at least 2, got %d", repeats)
			}
			m, err := testbed.LoadManifest(testbed.ManifestPath(args[0]))
			if err != nil {
				return inputErr(err)
			}
			configFor := demo.Config
			if m.Testbed == "gpu" {
				configFor = demo.GPUConfig
			}
			cfg, err := configFor(args[0])
			if err != nil {
				return err
			}
			bot, err := g.openConfig(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			defer bot.Close()
			err = testbed.Verify(cmd.Context(), m, demo.Measurer(bot), repeats, g.stdout)
			if errors.Is(err, testbed.ErrNotAsIntended) {
				return inputErr(err)
			}
			return err
		},
	}
	cmd.Flags().IntVar(&repeats, "repeats", 10, "runs of each change and of its parent")
	return cmd
}
