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
		opts   map[string]string
	)
	formats := strings.Join(bench.Formats(), ", ")
	cmd := &cobra.Command{
		Use:   "parse --format F FILE",
		Short: "Parse a benchmark output file into samples",
		Long: "Parse a benchmark output file into samples, as a benchmark step of that format would.\n\n" +
			"Formats: " + formats + ".\n" +
			"json and regex take their settings as --option key=value (the benchmark step's options:\n" +
			"fields for json; pattern, name, unit, better for regex).",
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format == "" {
				return usagef("parse needs --format (one of %s)", formats)
			}
			if !strings.Contains(", "+formats+", ", ", "+format+", ") {
				return usagef("--format %q: want one of %s", format, formats)
			}
			f, err := os.Open(args[0])
			if err != nil {
				return inputErr(err)
			}
			defer f.Close()
			options := map[string]string{"file": args[0]}
			for k, v := range opts {
				if k != "file" {
					options[k] = v
				}
			}
			samples, err := bench.Parse(format, f, options)
			if err != nil {
				return inputErr(err)
			}
			if asJSON {
				return writeJSON(g.stdout, samples)
			}
			return printSamples(g.stdout, samples)
		},
	}
	cmd.Flags().StringVar(&format, "format", "", "one of: "+strings.Join(bench.Formats(), ", "))
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	cmd.Flags().StringToStringVar(&opts, "option", nil, "a format option, key=value (repeatable)")
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
