// Package configs holds perfbot's example configurations: the embedded
// default that drives the bundled testbed, and starting points for real
// inference repositories (SGLang, vLLM, nccl-tests, vLLM on a Slurm
// cluster). A test loads every file here, so an example that stops
// loading fails the build.
package configs

import (
	"embed"
	"slices"
)

// FS holds every example configuration (*.yaml).
//
//go:embed *.yaml
var FS embed.FS

//go:embed testbed.yaml
var testbed []byte

// Testbed returns the embedded default configuration, the one perfbot uses
// when no configuration file is given.
func Testbed() []byte {
	return slices.Clone(testbed)
}
