// Command perfbot finds inference performance regressions and proves where
// they come from: it measures commits, bisects a drop to the culprit commit
// under noise, narrows it to the diff hunk and files an issue with the
// evidence. See README.md and `perfbot help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
