package store_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store"
)

// pageSize is bbolt's page size on the test machines; the damage below is
// placed relative to it.
const pageSize = 4096

// goodStore writes a store of a few hundred pages, closes it and returns
// its bytes.
func goodStore(t *testing.T) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "good.db")
	db, err := store.Open(path)
	require.NoError(t, err)
	log := strings.Repeat("step output line\n", 200)
	var runs []*record.Run
	for i := range 120 {
		r := newRun(i%17, time.Duration(i)*time.Minute, record.StatusOK,
			map[string]float64{"verify_tok_s": 80 + float64(i%9), "decode_tok_s": 140})
		r.Logs = []record.Log{{Step: "engine", Output: log}}
		runs = append(runs, r)
	}
	require.NoError(t, db.AddRuns(runs))
	require.NoError(t, db.PutFinding(record.Finding{ID: "f1"}))
	require.NoError(t, db.Close())
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Greater(t, len(raw), 64*pageSize, "the store must span many pages for the damage to land in data")
	return raw
}

// meta reads a field of the newer meta page of a bbolt file. (bbolt's file
// format: a 16-byte page header, then the meta fields: the freelist's page
// at offset 32, the page count at 40, the transaction id at 48.)
func meta(file []byte, offset int) uint64 {
	field := func(page, offset int) uint64 {
		return binary.LittleEndian.Uint64(file[page*pageSize+16+offset:])
	}
	page := 0
	if field(1, 48) > field(0, 48) {
		page = 1
	}
	return field(page, offset)
}

// highWater is the end of the pages a bbolt file uses. bbolt grows a file
// ahead of its pages, so the bytes after it are free and cutting them
// loses nothing.
func highWater(file []byte) int { return int(meta(file, 40)) * pageSize }

// freelistPage is the offset of the page that lists the free pages.
func freelistPage(file []byte) int { return int(meta(file, 32)) * pageSize }

// TestOpenDamaged opens stores that were cut short or overwritten. Each must
// fail with ErrDamaged, an error that names the file and says what to do,
// and must leave the file as it was: perfbot never recreates a store.
func TestOpenDamaged(t *testing.T) {
	good := goodStore(t)
	end := highWater(good)
	garbage := func(n int) []byte {
		b := make([]byte, n)
		x := uint32(2463534242)
		for i := range b {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			b[i] = byte(x)
		}
		return b
	}
	overwrite := func(off int, with []byte) []byte {
		b := append([]byte(nil), good...)
		copy(b[off:], with)
		return b
	}
	for _, tc := range []struct {
		name string
		file []byte
	}{
		{"empty file", []byte{}},
		{"cut inside the first meta page", good[:100]},
		{"cut inside the second meta page", good[:pageSize+100]},
		{"cut after the meta pages", good[:2*pageSize]},
		{"cut after the first data pages", good[:4*pageSize]},
		{"cut in the middle", good[:len(good)/2]},
		{"cut in the middle of a page", good[:len(good)/2+1000]},
		{"last page in use missing", good[:end-pageSize]},
		{"last byte in use missing", good[:end-1]},
		{"garbage", garbage(len(good))},
		{"garbage of one page", garbage(pageSize)},
		{"both meta pages overwritten", overwrite(0, garbage(2*pageSize))},
		{"data pages overwritten", overwrite(8*pageSize, garbage(16*pageSize))},
		{"every data page overwritten", overwrite(2*pageSize, garbage(len(good)-2*pageSize))},
		{"freelist overwritten", overwrite(freelistPage(good), garbage(pageSize))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "perfbot.db")
			require.NoError(t, os.WriteFile(path, tc.file, 0o600))

			db, err := openRecovered(path)
			if err == nil {
				_ = db.Close()
			}
			require.Error(t, err, "a damaged store must not open")
			assert.ErrorIs(t, err, store.ErrDamaged)
			assert.Contains(t, err.Error(), path, "the error names the file")
			assert.Contains(t, err.Error(), "restore it from a backup or move it aside")
			assert.NotContains(t, err.Error(), "panic", "a damaged file is an error, not a crash")

			_, again := openRecovered(path)
			assert.ErrorIs(t, again, store.ErrDamaged, "a refused file is closed and unlocked")

			after, rerr := os.ReadFile(path)
			require.NoError(t, rerr)
			assert.Equal(t, tc.file, after, "Open must leave a damaged file as it was")
		})
	}
}

// openRecovered is store.Open that turns a panic into a test error, so that
// one damaged file does not end the whole test binary.
func openRecovered(path string) (db *store.DB, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("store.Open panicked: %v", p)
		}
	}()
	return store.Open(path, store.WithLockTimeout(0))
}

// TestOpenUndamaged is the control: the whole file opens, and so does one
// that lost only the free bytes after its last page.
func TestOpenUndamaged(t *testing.T) {
	good := goodStore(t)
	require.Less(t, highWater(good), len(good), "the file must have free bytes after its pages")
	for _, tc := range []struct {
		name string
		file []byte
	}{
		{"whole file", good},
		{"free tail cut", good[:highWater(good)]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "perfbot.db")
			require.NoError(t, os.WriteFile(path, tc.file, 0o600))
			db, err := store.Open(path)
			require.NoError(t, err)
			defer db.Close()
			runs, err := db.Runs(store.RunFilter{})
			require.NoError(t, err)
			assert.Len(t, runs, 120)
			require.NoError(t, store.CheckConsistency(db))
		})
	}
}
