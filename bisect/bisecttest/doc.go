// Package bisecttest provides fakes for the searches of package bisect:
// seeded, noisy measurement worlds whose truth is known.
//
// History describes a first-parent chain of numbered commits ("c0000",
// "c0001", …) with the metric level of every commit, broken builds,
// infrastructure failures (always, or some tries in every few), outlier
// runs, a host whose speed wanders or jumps, and several hosts of
// different speeds; History.Oracle turns it into a bisect.HostOracle that
// draws log-normal values on the host it is told and counts the runs and
// builds (once per host) a search costs; with History.Trees a host keeps
// only that many built trees, as a pool slot does, and TreeBuilds counts
// the rebuilds of commits whose trees were given up too. SetWorld does the
// same for the set searches (hunks and environment variables).
//
// Every fake is deterministic for a seed: a commit's values come from its
// own random stream on each host, so the order in which a search (or K
// concurrent probes) asks for commits does not change what each commit
// measures there.
package bisecttest
