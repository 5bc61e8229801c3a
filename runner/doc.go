// Package runner knows where and how a target is measured: hosts (local,
// ssh), build steps, benchmark steps, timeouts that kill whole process
// groups, captured logs and the environment fingerprint of every run.
// It decides no verdicts.
package runner
