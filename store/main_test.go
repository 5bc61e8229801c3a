package store_test

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/perfbot/perfbot/store"
)

// The test binary re-executes itself to play a second perfbot process; these
// variables tell the child what to do and on which file.
const (
	childEnv     = "PERFBOT_STORE_TEST_CHILD"
	childPathEnv = "PERFBOT_STORE_TEST_PATH"
)

// Exit codes of the lock child.
const (
	childOpened = 0
	childFailed = 1
	childLocked = 3
)

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
	case "lock":
		os.Exit(lockChild(os.Getenv(childPathEnv)))
	case "durability":
		os.Exit(durabilityChild(os.Getenv(childPathEnv)))
	default:
		fmt.Fprintf(os.Stderr, "unknown %s %q\n", childEnv, os.Getenv(childEnv))
		os.Exit(2)
	}
	code := m.Run()
	removeBenchStores()
	os.Exit(code)
}

// lockChild opens the store with the default lock timeout and says how it
// went through its exit code; the error goes to stdout.
func lockChild(path string) int {
	db, err := store.Open(path)
	if err == nil {
		_ = db.Close()
		return childOpened
	}
	fmt.Print(err)
	if errors.Is(err, store.ErrLocked) {
		return childLocked
	}
	return childFailed
}
