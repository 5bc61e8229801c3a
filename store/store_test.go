package store_test

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/storetest"
)

var update = flag.Bool("update", false, "rewrite testdata/v1.db (a version 1 file: only with a perfbot whose SchemaVersion is 1)")

func TestOpen(t *testing.T) {
	for _, tc := range []struct {
		name string
		// prepare leaves something at path before Open.
		prepare func(t *testing.T, path string)
		opts    []store.Option
		wantErr string
		wantIs  error
	}{
		{
			name:    "new file in missing directories",
			prepare: func(*testing.T, string) {},
		},
		{
			name: "existing store",
			prepare: func(t *testing.T, path string) {
				db, err := store.Open(path)
				require.NoError(t, err)
				require.NoError(t, db.Close())
			},
		},
		{
			name: "store held by an open DB of this process",
			prepare: func(t *testing.T, path string) {
				db, err := store.Open(path)
				require.NoError(t, err)
				t.Cleanup(func() { _ = db.Close() })
			},
			opts:    []store.Option{store.WithLockTimeout(100 * time.Millisecond)},
			wantErr: "is in use by another perfbot process (lock not acquired within 100ms)",
			wantIs:  store.ErrLocked,
		},
		{
			name: "zero lock timeout fails at once",
			prepare: func(t *testing.T, path string) {
				db, err := store.Open(path)
				require.NoError(t, err)
				t.Cleanup(func() { _ = db.Close() })
			},
			opts:   []store.Option{store.WithLockTimeout(0)},
			wantIs: store.ErrLocked,
		},
		{
			name: "schema version of a newer perfbot",
			prepare: func(t *testing.T, path string) {
				db, err := store.Open(path)
				require.NoError(t, err)
				require.NoError(t, db.Close())
				require.NoError(t, store.WriteSchemaVersion(path, "7"))
			},
			wantErr: "the file has version 7, this perfbot reads up to version 6; upgrade perfbot",
			wantIs:  store.ErrNewerSchema,
		},
		{
			name: "schema version that is not a number",
			prepare: func(t *testing.T, path string) {
				db, err := store.Open(path)
				require.NoError(t, err)
				require.NoError(t, db.Close())
				require.NoError(t, store.WriteSchemaVersion(path, "one"))
			},
			wantErr: `schema version "one" is not a positive integer`,
		},
		{
			name: "bbolt file of another program",
			prepare: func(t *testing.T, path string) {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				b, err := bolt.Open(path, 0o600, nil)
				require.NoError(t, err)
				require.NoError(t, b.Update(func(tx *bolt.Tx) error {
					_, err := tx.CreateBucket([]byte("sessions"))
					return err
				}))
				require.NoError(t, b.Close())
			},
			wantErr: "not a perfbot store",
		},
		{
			name: "file that is not a database",
			prepare: func(t *testing.T, path string) {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, []byte("verify_tok_s 88.8\n"), 0o600))
			},
			wantErr: "is damaged (its header pages are not a bbolt database's (invalid database))",
			wantIs:  store.ErrDamaged,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "a", "b", "perfbot.db")
			tc.prepare(t, path)
			db, err := store.Open(path, tc.opts...)
			if tc.wantErr == "" && tc.wantIs == nil {
				require.NoError(t, err)
				assert.Equal(t, path, db.Path())
				require.NoError(t, db.Close())
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
			if tc.wantIs != nil {
				assert.ErrorIs(t, err, tc.wantIs)
			} else {
				assert.NotErrorIs(t, err, store.ErrLocked)
			}
		})
	}
}

// TestOpenLockedByAnotherProcess opens the store in a second process while
// this one holds it: the second gives up with ErrLocked and names the file.
func TestOpenLockedByAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "perfbot.db")
	db, err := store.Open(path)
	require.NoError(t, err)

	out, code := runLockChild(t, path)
	assert.Equal(t, childLocked, code, "child output: %s", out)
	assert.Equal(t, "store "+path+" is in use by another perfbot process (lock not acquired within 1s)", out)

	require.NoError(t, db.Close())
	out, code = runLockChild(t, path)
	assert.Equal(t, childOpened, code, "after Close the child opens the store; output: %s", out)
}

func runLockChild(t *testing.T, path string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=lock", childPathEnv+"="+path)
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run lock child: %v", err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// fixture is what testdata/v1.db holds. v1Fixture (and newRun, commitHash
// and t0 beneath it) must not change while the file stays as it is.
type fixture struct {
	commit  record.Commit
	runs    []*record.Run
	job     store.Job
	finding record.Finding
	issue   int
}

func v1Fixture() fixture {
	f := fixture{
		commit: record.Commit{
			Hash: commitHash(1), Subject: "communicator: use ring allreduce", Author: "A. Engineer",
			Email: "a@example.com", Date: t0.Add(-time.Hour), Parents: []string{commitHash(0)},
		},
		runs: []*record.Run{
			newRun(0, 0, record.StatusOK, map[string]float64{"verify_tok_s": 88.8, "decode_tok_s": 140}),
			newRun(1, time.Minute, record.StatusOK, map[string]float64{"verify_tok_s": 82.2, "decode_tok_s": 139}),
			newRun(2, 2*time.Minute, record.StatusBuildFailed, nil),
			newRun(1, 3*time.Minute, record.StatusOK, tok(75.0), withHunks("p", "h1")),
		},
		job: store.Job{
			ID: "bisect-1", Kind: record.JobBisect, Status: record.JobRunning,
			Params: json.RawMessage(`{"good":"` + commitHash(0) + `"}`), State: json.RawMessage(`{"probes":2}`),
			Created: t0, Updated: t0.Add(time.Minute),
		},
		finding: record.Finding{
			Created: t0.Add(time.Hour), Metric: "verify_tok_s", Outcome: record.OutcomeCulprit,
			Culprits: []record.Culprit{{Commit: record.Commit{Hash: commitHash(1)}, Confidence: 0.995}},
			State:    record.StateFiled, Issue: 12,
		},
		issue: 12,
	}
	f.finding.ID = f.finding.Fingerprint()
	return f
}

// TestOpenV1File opens a store written by schema version 1 and reads every
// kind of record back: a later schema must keep this test passing through
// its migrations.
func TestOpenV1File(t *testing.T) {
	const fixturePath = "testdata/v1.db"
	want := v1Fixture()
	if *update {
		require.Equal(t, 1, store.SchemaVersion, "testdata/v1.db must stay a version 1 file")
		if err := os.Remove(fixturePath); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		db, err := store.Open(fixturePath)
		require.NoError(t, err)
		require.NoError(t, db.PutCommit(want.commit))
		for _, r := range want.runs {
			_, err := db.AddRun(r)
			require.NoError(t, err)
		}
		require.NoError(t, db.PutJob(want.job))
		require.NoError(t, db.PutFindingIssue(want.finding, want.issue))
		require.NoError(t, db.Close())
	}
	raw, err := os.ReadFile(fixturePath)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "v1.db")
	require.NoError(t, os.WriteFile(path, raw, 0o600))

	db, err := store.Open(path)
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, store.CheckConsistency(db))

	c, ok, err := db.Commit(want.commit.Hash)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, want.commit, c)

	r, ok, err := db.Run(2)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, 82.2, r.Values["verify_tok_s"])
	assert.Equal(t, want.runs[1].Fingerprint, r.Fingerprint)

	rows, err := db.History(store.HistoryQuery{Metric: "verify_tok_s"})
	require.NoError(t, err)
	require.Len(t, rows, 2)
	assert.Equal(t, []float64{82.2, 88.8}, []float64{rows[0].Value, rows[1].Value})

	st, ok, err := db.Status(specA, want.runs[2].TargetKey)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, record.StatusBuildFailed, st)

	j, ok, err := db.Job(want.job.ID)
	require.NoError(t, err)
	require.True(t, ok)
	assert.JSONEq(t, string(want.job.State), string(j.State))

	// The id version 1 gave it, abbreviated, still names the finding,
	// which has its short id now; its issue stays under the fingerprint.
	f, ok, err := db.Finding(want.finding.ID[:14])
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, want.finding.DerivedID(), f.ID)
	n, ok, err := db.IssueFor(want.finding.ID)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, want.issue, n)

	// The old file takes new runs after the migration.
	_, err = db.AddRun(newRun(3, time.Hour, record.StatusOK, tok(80)))
	require.NoError(t, err)
	require.NoError(t, store.CheckConsistency(db))
}

func TestCommit(t *testing.T) {
	db := storetest.Open(t)
	c := record.Commit{Hash: commitHash(3), Subject: "attention: new kernel", Author: "B", Date: t0, Parents: []string{commitHash(2)}}
	require.NoError(t, db.PutCommit(c))
	c.Subject = "attention: new kernel (v2)"
	require.NoError(t, db.PutCommit(c), "a commit can be recorded again")

	for _, tc := range []struct {
		name    string
		hash    string
		want    record.Commit
		wantOK  bool
		wantErr string
	}{
		{name: "known", hash: commitHash(3), want: c, wantOK: true},
		{name: "unknown", hash: commitHash(4)},
		{name: "abbreviated hash is not a key", hash: commitHash(3)[:10]},
		{name: "empty hash", hash: "", wantErr: "empty hash"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := db.Commit(tc.hash)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantOK, ok)
			assert.Equal(t, tc.want, got)
		})
	}
	require.ErrorContains(t, db.PutCommit(record.Commit{Subject: "no hash"}), "empty hash")
}
