// Package record holds the records every part of perfbot passes along:
// what is measured (Target), how (Spec, Step, BenchStep, Metric), what one
// execution gave (Run, Log, Fingerprint, GPU, Sample), what a search
// concluded (Outcome, Direction) and what is filed (Finding with its
// culprits, their hunks and the ends), plus the kinds and states of jobs.
//
// The package imports nothing of the module, so that store, config, runner,
// bench, the engines, report and service can all speak of the same record
// without importing each other. It holds data and the identities derived
// from it (Target.Key, Spec.Hash, Finding.Fingerprint and DerivedID), never
// behaviour.
package record
