// Package storetest opens temporary stores for tests.
package storetest

import (
	"path/filepath"
	"testing"

	"github.com/perfbot/perfbot/store"
)

// Open opens a new store in a temporary directory of t and closes it when
// the test ends.
func Open(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "perfbot.db"))
	if err != nil {
		t.Fatalf("open temporary store: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close temporary store: %v", err)
		}
	})
	return db
}
