package main

import "github.com/spf13/cobra"

func demoCmd(g *globals) *cobra.Command    { return &cobra.Command{Use: "demo"} }
func testbedCmd(g *globals) *cobra.Command { return &cobra.Command{Use: "testbed"} }
