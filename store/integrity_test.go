package store_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store"
)

// TestRandomDamageIsNeverReadAsData overwrites 16 bytes at a random place
// of a store, 80 times (seeded), opens it and reads everything back. Each
// time the store must refuse to open, report the damage, or read exactly
// what was written (the bytes hit free space): never other data.
func TestRandomDamageIsNeverReadAsData(t *testing.T) {
	good := goodStore(t)
	end := highWater(good)
	want, err := readAll(t, good)
	require.NoError(t, err)

	rng := rand.New(rand.NewPCG(36, 2026))
	counts := map[string]int{}
	for i := range 80 {
		file := append([]byte(nil), good...)
		off := rng.IntN(end - 16)
		for j := range 16 {
			file[off+j] = byte(rng.Uint32())
		}
		got, err := readAll(t, file)
		var outcome string
		switch {
		case errors.Is(err, errOpen):
			outcome = "refused to open"
		case errors.Is(err, store.ErrDamaged):
			outcome = "reported damaged"
		case err != nil:
			outcome = "other error"
			t.Logf("damage %d at byte %d: %v", i, off, err)
		case got == want:
			outcome = "read as written"
		default:
			outcome = "read other data"
			t.Errorf("damage %d at byte %d (page %d) was read as other data", i, off, off/pageSize)
		}
		counts[outcome]++
	}
	t.Logf("80 random 16-byte overwrites: %v", counts)
	assert.Zero(t, counts["read other data"])
}

var errOpen = errors.New("open")

// readAll writes file as a store, opens it and returns everything it
// reads back, in JSON; a panic is an error.
func readAll(t *testing.T, file []byte) (out string, err error) {
	path := filepath.Join(t.TempDir(), "perfbot.db")
	require.NoError(t, os.WriteFile(path, file, 0o600))
	db, err := openRecovered(path)
	if err != nil {
		return "", fmt.Errorf("%w: %w", errOpen, err)
	}
	defer db.Close()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("read panicked: %v", p)
		}
	}()
	var all []any
	runs, err := db.Runs(store.RunFilter{})
	if err != nil {
		return "", err
	}
	all = append(all, runs)
	rows, err := db.History(store.HistoryQuery{All: true})
	if err != nil {
		return "", err
	}
	all = append(all, rows)
	fs, err := db.Findings()
	if err != nil {
		return "", err
	}
	all = append(all, fs)
	data, err := json.Marshal(all)
	return string(data), err
}

// TestDamagedValueIsReportedDamaged: one byte of a stored value changed
// (a sample's value, a finding's metric) is reported as damage, naming the
// record, not read as what the bytes now say.
func TestDamagedValueIsReportedDamaged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "perfbot.db")
	db, err := store.Open(path)
	require.NoError(t, err)
	r := newRun(1, 0, record.StatusOK, map[string]float64{"verify_tok_s": 81.25})
	_, err = db.AddRun(r)
	require.NoError(t, err)
	require.NoError(t, db.PutFinding(record.Finding{ID: "f1", Metric: "verify_tok_s"}))
	require.NoError(t, db.Close())

	history := func(db *store.DB) error { _, err := db.History(store.HistoryQuery{All: true}); return err }
	historyPage := func(db *store.DB) error {
		_, _, err := db.HistoryPage(store.HistoryQuery{All: true, Limit: 10}, "")
		return err
	}
	findings := func(db *store.DB) error { _, err := db.Findings(); return err }
	findingsPage := func(db *store.DB) error { _, _, err := db.FindingsPage("", 10); return err }
	for _, tc := range []struct {
		name, from, to string
		reads          []func(*store.DB) error
	}{
		{"a sample's value", `81.25`, `91.25`, []func(*store.DB) error{history, historyPage}},
		{"a finding's metric", `"metric":"verify_tok_s"`, `"metric":"verify_tok_x"`, []func(*store.DB) error{findings, findingsPage}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Positive(t, bytes.Count(file, []byte(tc.from)), "the value is in the file")
			damaged := filepath.Join(t.TempDir(), "perfbot.db")
			require.NoError(t, os.WriteFile(damaged, bytes.ReplaceAll(file, []byte(tc.from), []byte(tc.to)), 0o600))
			db, err := store.Open(damaged)
			require.NoError(t, err, "bbolt's pages are intact; the damage is inside a value")
			defer db.Close()
			for i, read := range tc.reads {
				err := read(db)
				require.ErrorIs(t, err, store.ErrDamaged, "read %d", i)
				require.ErrorIs(t, err, store.ErrDamagedRecord, "read %d", i)
				assert.Contains(t, err.Error(), "checksum does not match", "read %d", i)
			}
		})
	}
}

// TestMigrateV6SealsEveryValue: a version 5 store, without checksums,
// opens as version 6 and reads as it was; every value is sealed.
func TestMigrateV6SealsEveryValue(t *testing.T) {
	good := goodStore(t)
	path := filepath.Join(t.TempDir(), "perfbot.db")
	require.NoError(t, os.WriteFile(path, good, 0o600))
	want, err := readAll(t, good)
	require.NoError(t, err)
	require.NoError(t, store.WriteVersion5(path))

	old, err := os.ReadFile(path)
	require.NoError(t, err)
	got, err := readAll(t, old)
	require.NoError(t, err)
	assert.Equal(t, want, got, "the version 5 store reads as it was")

	db, err := store.Open(path)
	require.NoError(t, err)
	require.NoError(t, store.CheckConsistency(db), "the runs read back sealed")
	require.NoError(t, db.Close())
}
