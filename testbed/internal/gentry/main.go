package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/perfbot/perfbot/testbed"
)

func main() {
	seed, _ := strconv.ParseInt(os.Args[2], 10, 64)
	t := time.Now()
	m, err := testbed.Generate(context.Background(), os.Args[1], seed)
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	fmt.Println("took", time.Since(t), "head", m.Head, "commits", m.Commits)
	for _, c := range m.Changes {
		fmt.Printf("%s %-12s %3d %s %q files=%d hunk=%+v eff=%v\n", c.ID, c.Kind, c.Index, c.Commit[:8], c.Subject, len(c.Files), c.Hunk, c.Effects)
	}
}
