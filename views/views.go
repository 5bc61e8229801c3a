package views

import (
	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/detect"
	"github.com/perfbot/perfbot/record"
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

// detectConfig is the detection of one metric as configured, as the
// nightly cycle runs it.
func (v *Views) detectConfig(m record.Metric) detect.Config {
	return detect.Config{
		Better:        m.Better,
		MinEffect:     v.Config.Detect.MinEffectOf(m.Name),
		MissingNights: v.Config.Detect.MissingNights,
		Warmup:        v.Config.Detect.Warmup,
	}
}
