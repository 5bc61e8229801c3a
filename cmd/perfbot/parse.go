package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/bench"
	"github.com/perfbot/perfbot/record"
)

func parseCmd(g *globals) *cobra.Command {
	var (
		format string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "parse --format F FILE",
		Short: "Parse a benchmark output file into samples",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format == "" {
				return usagef("parse needs --format (one of %v)", bench.Formats())
			}
			f, err := os.Open(args[0])
			if err != nil {
				return inputErr(err)
			}
			defer f.Close()
			samples, err := bench.Parse(format, f, nil)
			if err != nil {
				return inputErr(fmt.Errorf("%s: %w", args[0], err))
			}
			if asJSON {
				return writeJSON(g.stdout, samples)
			}
			return printSamples(g.stdout, samples)
		},
	}
	cmd.Flags().StringVar(&format, "format", "", "one of: "+strings.Join(bench.Formats(), ", "))
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

func printSamples(w io.Writer, samples []record.Sample) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVALUE\tUNIT\tBETTER")
	for _, s := range samples {
		fmt.Fprintf(tw, "%s\t%g\t%s\t%s\n", s.Name, s.Value, s.Unit, s.Better)
	}
	return tw.Flush()
}
