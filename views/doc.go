// Package views is perfbot's read side: the history of the samples, the
// findings, the jobs with their traces, a commit and two commits side by
// side, the dashboard's front page and the vitals /metrics exposes, all
// computed from the store and the configuration alone. It has no
// repository, no host and no Oracle, so a reader works while the
// repository is unreachable, a job runs or nothing was ever measured.
//
// The command line's read commands and the HTTP server read through a
// Views; package service, the write side, measures and files what they
// read, and imports nothing of this package.
package views
