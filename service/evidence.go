package service

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/secret"
	"github.com/perfbot/perfbot/store"
)

// maxRawRuns bounds the raw runs a finding keeps of each side: the latest
// are kept, which are the ones the comparisons rest on.
const maxRawRuns = 200

// runsOf reads the stored runs of commit under the oracle's spec, newest
// first: the one read of an end from which all its evidence is taken.
func (b *Bot) runsOf(commit string) ([]record.Run, error) {
	runs, err := b.Store.Runs(store.RunFilter{TargetKey: record.Target{Commit: commit}.Key(), SpecHash: b.Oracle.SpecHash()})
	if err != nil {
		return nil, fmt.Errorf("runs of %s: %w", record.ShortHash(commit), err)
	}
	return runs, nil
}

// endRuns reads the stored runs of a finding's two ends, one read each.
func (b *Bot) endRuns(good, bad string) (goodRuns, badRuns []record.Run, err error) {
	if goodRuns, err = b.runsOf(good); err != nil {
		return nil, nil, err
	}
	badRuns, err = b.runsOf(bad)
	return goodRuns, badRuns, err
}

// addEvidence fills in what f shows of the machines its two ends ran on,
// from their runs (newest first): the environment and how it differs, the
// GPU and NCCL state and how it differs, and the speculative breakdown.
func (b *Bot) addEvidence(f *record.Finding, good, bad []record.Run) {
	f.EnvGood, f.EnvDiffs = envEvidence(good, bad)
	f.GoodState, f.BadState, f.StateDiffs = stateEvidence(good, bad)
	f.Speculative = b.specEvidence(f, good, bad)
}

// endOf is the evidence's summary of one end: the search's summary of the
// runs its comparisons counted, and the raw values of every stored run of
// it (newest first), oldest first.
func endOf(c record.Commit, s bisect.EndSummary, runs []record.Run, metric string) record.End {
	e := record.End{Commit: c, N: s.N, Median: s.Median, Interval: s.Interval}
	e.Runs, e.CPUAffinity = rawRuns(runs, metric)
	return e
}

// rawRuns returns the ok runs among runs with a value of metric, oldest
// first, each with the host's load before it, and the CPU affinity of the
// last of them ("" when the host did not record it).
func rawRuns(runs []record.Run, metric string) ([]record.RunValue, string) {
	runs = slices.Clone(runs)
	slices.SortStableFunc(runs, func(a, b record.Run) int { return a.Started.Compare(b.Started) })
	var out []record.RunValue
	affinity := ""
	for _, r := range runs {
		v, ok := r.Values[metric]
		if r.Status != record.StatusOK || !ok {
			continue
		}
		out = append(out, record.RunValue{Value: v, Started: r.Started, Host: r.Host, LoadAvg: r.Fingerprint.LoadAvg})
		affinity = r.Fingerprint.CPUAffinity
	}
	if len(out) > maxRawRuns {
		out = out[len(out)-maxRawRuns:]
	}
	return out, affinity
}

// envEvidence returns the environment the good end's last run saw and the
// variables that differ at the bad end's last run.
func envEvidence(good, bad []record.Run) (map[string]string, []record.EnvDiff) {
	if len(good) == 0 || len(bad) == 0 {
		var ge record.Fingerprint
		if len(good) > 0 {
			ge = good[0].Fingerprint
		}
		return ge.Env, nil
	}
	ge, be := good[0].Fingerprint, bad[0].Fingerprint
	var diffs []record.EnvDiff
	for _, k := range unionKeys(ge.Env, be.Env) {
		if ge.Env[k] != be.Env[k] {
			diffs = append(diffs, record.EnvDiff{Name: k, Good: ge.Env[k], Bad: be.Env[k]})
		}
	}
	for _, d := range []struct{ name, g, b string }{
		{"host", ge.Host, be.Host}, {"cpu", ge.CPUModel, be.CPUModel}, {"go", ge.GoVersion, be.GoVersion}, {"kernel", ge.Kernel, be.Kernel},
	} {
		if d.g != d.b {
			diffs = append(diffs, record.EnvDiff{Name: "(" + d.name + ")", Good: d.g, Bad: d.b})
		}
	}
	slices.SortFunc(diffs, func(a, b record.EnvDiff) int { return strings.Compare(a.Name, b.Name) })
	env := maps.Clone(ge.Env)
	if env == nil {
		env = map[string]string{}
	}
	env["(host)"], env["(cpu)"], env["(go)"] = ge.Host, fmt.Sprintf("%s × %d", ge.CPUModel, ge.CPUs), ge.GoVersion
	return env, diffs
}

// lastLog is the output of every step of the last of runs (newest first).
func lastLog(runs []record.Run) string {
	if len(runs) == 0 {
		return ""
	}
	var sb strings.Builder
	for _, l := range runs[0].Logs {
		fmt.Fprintf(&sb, "$ %s (exit %d)\n%s\n", l.Step, l.ExitCode, l.Output)
	}
	return sb.String()
}

// steps are the configured build and benchmark steps as plain shell
// commands, run in a checkout of the commit: a server step starts in the
// background and is stopped after its benchmark. Secret values are
// masked.
func (b *Bot) steps() []string {
	var out []string
	for _, s := range b.Config.Build {
		out = append(out, shellLine(s.Env, s.Run))
	}
	for _, s := range b.Config.Benchmarks {
		if s.Server != nil {
			out = append(out, shellLine(s.Server.Env, s.Server.Run)+" &  # the server of "+s.Name+"; wait until "+s.Server.ReadyURL+" answers")
		}
		out = append(out, shellLine(s.Env, s.Run))
		if s.Server != nil {
			out = append(out, "kill %1  # stop the server")
		}
	}
	return out
}

// shellLine is run with env's assignments before it, as a shell takes them.
func shellLine(env map[string]string, run string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(env)) {
		b.WriteString(k + "=" + shellQuote(secret.Redact(k, env[k])) + " ")
	}
	b.WriteString(strings.TrimSpace(run))
	return b.String()
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]*$`)

func shellQuote(s string) string {
	if s != "" && shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// perfbot is a perfbot command line of the finding's Reproduce section:
// with --config naming the configuration it was found with.
func (b *Bot) perfbot(format string, args ...any) string {
	return b.withConfig("perfbot " + fmt.Sprintf(format, args...))
}

// withConfig is the perfbot command line cmd with --config naming the
// configuration, when there is one.
func (b *Bot) withConfig(cmd string) string {
	if b.Config.Path != "" {
		cmd += " --config " + shellQuote(b.Config.Path)
	}
	return cmd
}
