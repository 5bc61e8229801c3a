package main

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/service"
)

// TestWorkRunsTheQueue: perfbot work runs what was queued and exits;
// a job that failed on its input makes it exit as that job's command
// would, after the other jobs ran; a second call finds nothing waiting.
func TestWorkRunsTheQueue(t *testing.T) {
	dir, hashes := toyProject(t, []toyCommit{{tokS: 100}, {tokS: 100}, {tokS: 80}})
	t.Chdir(dir)
	cfg, err := config.Load("perfbot.yaml")
	require.NoError(t, err)
	bot, err := service.Open(context.Background(), cfg, service.Options{Progress: io.Discard})
	require.NoError(t, err)
	good, err := bot.Enqueue(record.JobBisect, service.BisectRequest{Good: hashes[0], Bad: hashes[2]})
	require.NoError(t, err)
	bad, err := bot.Enqueue(record.JobBisect, service.BisectRequest{Good: "no-such-revision", Bad: hashes[2]})
	require.NoError(t, err)
	require.NoError(t, bot.Close())

	out, errOut, code := perfbot(t, dir, "work")
	require.Equal(t, exitInput, code, errOut)
	require.Regexp(t, good+`\s+bisect\s+done\s+[1-9]\d*\s+[1-9]\d*\s+\d+s`, out, "the queue's record shows what its bisection measured")
	require.Regexp(t, bad+`\s+bisect\s+failed\s+0\s+0\s+0s\s+.*no-such-revision`, out)
	require.Contains(t, errOut, "job "+bad+" failed")

	require.Contains(t, errOut, "confirm  "+record.ShortHash(hashes[2])+" confirmed", "the queued bisection found the culprit")

	out, errOut, code = perfbot(t, dir, "work")
	require.Equal(t, exitOK, code, errOut)
	require.Equal(t, "no job was waiting\n", out)
}
