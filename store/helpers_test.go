package store_test

import (
	"crypto/sha1"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/perfbot/perfbot/record"
)

// t0 is the start of the test histories.
var t0 = time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)

const (
	specA = "spec-a"
	specB = "spec-b"
)

// commitHash is a full-length hash that names commit n of a test history.
func commitHash(n int) string {
	sum := sha1.Sum([]byte(strconv.Itoa(n)))
	return hex.EncodeToString(sum[:])
}

type runOpt func(*record.Run)

func withSpec(h string) runOpt { return func(r *record.Run) { r.SpecHash = h } }
func withHost(h string) runOpt { return func(r *record.Run) { r.Host = h } }

func withHunks(patch string, hunks ...string) runOpt {
	return func(r *record.Run) { r.Target.Patch, r.Target.Hunks = patch, hunks }
}

func withEnv(env map[string]string) runOpt { return func(r *record.Run) { r.Target.Env = env } }

// newRun is a run of commit n started at t0+at under specA on host "gpu0".
func newRun(n int, at time.Duration, status record.Status, values map[string]float64, opts ...runOpt) *record.Run {
	r := &record.Run{
		SpecHash: specA,
		Target:   record.Target{Commit: commitHash(n)},
		Host:     "gpu0",
		Status:   status,
		Started:  t0.Add(at),
		Duration: 90 * time.Second,
		Fingerprint: record.Fingerprint{
			Host: "gpu0", OS: "linux", CPUModel: "EPYC", CPUs: 64,
			Env: map[string]string{"NCCL_PROTO": "LL"},
		},
		Values: values,
	}
	for _, o := range opts {
		o(r)
	}
	r.TargetKey = r.Target.Key()
	return r
}

func tok(v float64) map[string]float64 { return map[string]float64{"verify_tok_s": v} }
