package service

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/store"
)

// OpenRecords opens the workspace's store alone: no clone or fetch of the
// repository, no host, no Oracle. That is enough for the read models
// (History, ListFindings, Finding) and for filing (File, RetryUnfiled),
// which a reader may want while the repository is unreachable; the jobs
// (Measure, Bisect, Hunks, EnvBisect, StoreFindings) need a Bot from Open.
// Close releases the store.
func OpenRecords(cfg *config.Config, opts Options) (*Bot, error) {
	opts.defaults()
	db, err := openStore(cfg, opts)
	if err != nil {
		return nil, err
	}
	return &Bot{Config: cfg, Store: db, Progress: opts.Progress, Logger: opts.Logger, Version: opts.Version, clock: opts.Clock}, nil
}

func (o *Options) defaults() {
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// EndpointPath is where `perfbot serve` announces itself beside the store
// at storePath (its address, pid and session token), so that commands on
// the same store go through it.
func EndpointPath(storePath string) string { return storePath + ".serve" }

// ErrNoStore is returned by OpenRecords with Options.Existing when the
// store file does not exist yet: nothing was ever recorded.
var ErrNoStore = errors.New("no store yet")

// openStore opens the configured store, or the one Options.Store names.
func openStore(cfg *config.Config, opts Options) (*store.DB, error) {
	path := cfg.Store
	if opts.Store != "" {
		path = opts.Store
	}
	if opts.Existing {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", path, ErrNoStore)
		}
	}
	return store.Open(path)
}
