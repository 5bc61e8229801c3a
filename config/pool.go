package config

import (
	"time"

	"go.yaml.in/yaml/v3"
)

// Pool is how the host pool treats a host that keeps failing:
//
//	pool: {max_failures: 3, cooldown: 10m}
//
// A host that could not be reached, refused perfbot's key or dropped its
// connection MaxFailures times in a row (each already retried with
// backoff) leaves the pool; after Cooldown, or at the next job, one lease
// tries it again. Zero values are the runner's defaults (3 and 10m).
type Pool struct {
	MaxFailures int
	Cooldown    time.Duration
}

func (d *decoder) pool(n *yaml.Node) Pool {
	f := d.mapping(n, "pool", "max_failures", "cooldown")
	var p Pool
	if v := value(f, "max_failures"); v != nil {
		p.MaxFailures = d.positive(v, "pool.max_failures")
	}
	if v := value(f, "cooldown"); v != nil {
		p.Cooldown = d.duration(v, "pool.cooldown")
	}
	return p
}
