package views

import (
	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/store"
)

// Views reads what the store holds of the configured repository.
type Views struct {
	Config *config.Config
	Store  *store.DB
	// HostStates tells the health of the pool's hosts, which Vitals
	// reports; nil where no pool is at hand (the service sets it from its
	// Oracle).
	HostStates func() []runner.HostState
}

// New returns the views of db, read with cfg's metrics and repository.
func New(cfg *config.Config, db *store.DB) *Views {
	return &Views{Config: cfg, Store: db}
}
