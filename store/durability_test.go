package store_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store"
)

// batchSize is the largest number of runs the durability child commits in
// one transaction.
const batchSize = 3

// TestDurabilityUnderKill lets a second process add runs in a loop and
// kills it with SIGKILL at an arbitrary point, three times over the same
// file. Every run the child reported as committed must be there with its
// samples, and no run may be there in part.
func TestDurabilityUnderKill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "perfbot.db")
	committed := map[uint64]bool{}
	const rounds = 3
	for round := range rounds {
		killAfter := 10 + 7*round
		reported := runDurabilityChild(t, path, killAfter)
		require.GreaterOrEqual(t, len(reported), killAfter, "round %d: the child stopped before it was killed", round)
		for _, id := range reported {
			committed[id] = true
		}
	}

	db, err := store.Open(path)
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, store.CheckConsistency(db))

	runs, err := db.Runs(store.RunFilter{})
	require.NoError(t, err)
	stored := map[uint64]bool{}
	for _, r := range runs {
		stored[r.ID] = true
	}
	for id := range committed {
		assert.True(t, stored[id], "run %d was reported committed but is missing", id)
	}
	// A run may have committed in the instant before the kill without being
	// reported; only the transaction in flight can be such a run.
	assert.LessOrEqual(t, len(stored)-len(committed), rounds*batchSize, "unreported runs")

	samples := 0
	for _, r := range runs {
		if r.Status == record.StatusOK {
			samples += len(r.Values)
		}
	}
	rows, err := db.History(store.HistoryQuery{})
	require.NoError(t, err)
	assert.Equal(t, samples, len(rows), "samples of the ok runs")
}

// runDurabilityChild starts the child, SIGKILLs it once it has reported
// killAfter runs, and returns every id it reported.
func runDurabilityChild(t *testing.T, path string, killAfter int) []uint64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=durability", childPathEnv+"="+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())

	var ids []uint64
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		id, err := strconv.ParseUint(sc.Text(), 10, 64)
		require.NoError(t, err, "child output %q", sc.Text())
		ids = append(ids, id)
		if len(ids) == killAfter {
			require.NoError(t, cmd.Process.Kill())
		}
	}
	// Lines written before the kill are still in the pipe and were read.
	require.NoError(t, sc.Err())
	_ = cmd.Wait()
	require.Equal(t, -1, cmd.ProcessState.ExitCode(), "the child must die of the signal; stderr: %s", stderr.String())
	return ids
}

// durabilityChild adds runs until it is killed, alternating single runs and
// batches, and prints each id once its transaction has committed.
func durabilityChild(path string) int {
	db, err := store.Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	log := strings.Repeat("step output line\n", 500) // runs that span pages
	for i := 0; ; i++ {
		batch := make([]*record.Run, 1+i%batchSize)
		for j := range batch {
			n := i*batchSize + j
			status := record.StatusOK
			switch {
			case n%5 == 4:
				status = record.StatusBuildFailed
			case n%7 == 6:
				status = record.StatusInfraError
			}
			r := newRun(n%11, time.Duration(n)*time.Minute, status,
				map[string]float64{"verify_tok_s": 80 + float64(n%9), "decode_tok_s": 140, "verify_ms": 12})
			r.Logs = []record.Log{{Step: "engine", Output: log}}
			batch[j] = r
		}
		if err := db.AddRuns(batch); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		for _, r := range batch {
			fmt.Println(r.ID)
		}
	}
}
