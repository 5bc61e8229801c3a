package main

import "github.com/spf13/cobra"

func testbedCmd(g *globals) *cobra.Command { return &cobra.Command{Use: "testbed"} }
