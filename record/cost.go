package record

// Cost is what a job cost, or the search a finding came from: its
// benchmark runs, builds and wall time. Reports embed it, so that a job
// run in several attempts adds the earlier ones with one method.
type Cost struct {
	Runs        int     `json:"runs"`
	Builds      int     `json:"builds"`
	WallSeconds float64 `json:"wall_seconds"`
}

// Plus returns the sum of two costs.
func (c Cost) Plus(d Cost) Cost {
	return Cost{Runs: c.Runs + d.Runs, Builds: c.Builds + d.Builds, WallSeconds: c.WallSeconds + d.WallSeconds}
}

// Add adds d to c.
func (c *Cost) Add(d Cost) { *c = c.Plus(d) }
