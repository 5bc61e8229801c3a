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

// rawRuns returns the recorded ok runs of t with a value of metric, oldest
// first, each with the host's load before it, and the CPU affinity of the
// last of them ("" when the host did not record it).
func (b *Bot) rawRuns(t record.Target, metric string) ([]record.RunValue, string) {
	runs, err := b.Store.Runs(store.RunFilter{TargetKey: t.Key(), SpecHash: b.Oracle.SpecHash()})
	if err != nil {
		return nil, ""
	}
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

// confirmationOf is the record of a bisection's confirmation.
func confirmationOf(c bisect.Confirmation) *record.Confirmation {
	return &record.Confirmation{Confirmed: c.Confirmed, Pairs: c.Pairs, Fresh: c.Fresh,
		Effect: c.Effect, Text: c.String()}
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
	cmd := "perfbot " + fmt.Sprintf(format, args...)
	if b.Config.Path != "" {
		cmd += " --config " + shellQuote(b.Config.Path)
	}
	return cmd
}
