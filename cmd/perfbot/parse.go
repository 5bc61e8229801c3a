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
			"json, regex and openai take their settings as --option key=value (the benchmark step's\n" +
			"options: fields, unit, better for json; pattern, name, unit, better for regex;\n" +
			"allow_failed for openai).",
		Example: `  perfbot parse --format gobench bench.txt
  perfbot parse --format nccl-tests all_reduce.log --json
  perfbot parse --format regex --option 'pattern=(?m)^Decode\.\s+median latency: (?P<value>[0-9.]+) s' --option unit=s run.log`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
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
	markRequired(cmd, "format")
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
