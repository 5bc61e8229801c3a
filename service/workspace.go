package service

import (
	"io"
	"log/slog"

	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/store"
)

// OnStore returns a Bot over the open store db alone: no clone or fetch
// of the repository, no host, no Oracle. It queues jobs (Enqueue),
// triages (Triage) and files what the store holds (File, RetryUnfiled),
// which a person may want while the repository is unreachable; the jobs
// (Measure, Bisect, Hunks, EnvBisect, StoreFindings) need a Bot from Open.
// It takes opts' progress, logger, clock and version. Close closes db.
func OnStore(cfg *config.Config, db *store.DB, opts Options) *Bot {
	opts.defaults()
	return &Bot{Config: cfg, Store: db, Progress: opts.Progress, Logger: opts.Logger, Version: opts.Version, clock: opts.Clock}
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

// openStore opens the configured store, or the one Options.Store names.
func openStore(cfg *config.Config, opts Options) (*store.DB, error) {
	path := cfg.Store
	if opts.Store != "" {
		path = opts.Store
	}
	return store.Open(path)
}
