package report

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"text/template"
	"time"
	"unicode/utf8"

	"github.com/perfbot/perfbot/internal/num"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/secret"
)

// MaxBodyRunes is the longest issue body Render produces. GitHub refuses
// bodies over 65536 characters with a 422; the margin leaves room for the
// line a re-detection comment puts above the body.
const MaxBodyRunes = 65000

//go:embed templates/*.md.tmpl
var templateFS embed.FS

var templates = template.Must(template.New("report").Funcs(template.FuncMap{
	"num":      formatNum,
	"pct":      formatPct,
	"ci":       formatCI,
	"effect":   formatEffect,
	"measured": formatMeasured,
	"an":       record.Direction.Indefinite,
	"conf":     num.Confidence,
	"text":     escapeText,
	"code":     codeSpan,
	"cell":     tableCell,
	"fence":    fenced,
	"date":     formatDate,
	"spark":    sparkline,
	"lines":    hunkLines,
	"dur":      formatSeconds,
	"inc":      func(i int) int { return i + 1 },
	"est":      formatEstimate,
	"specterm": specTermLabel,
	"specunit": specTermUnit,
}).ParseFS(templateFS, "templates/*.md.tmpl"))

// Render returns the title and the Markdown body of the issue for f. The
// body carries every piece of evidence the finding holds, the warnings of
// Warnings(f) after f.Warnings, and, as its last line, a hidden fingerprint
// marker that keeps one issue per regression; marker-like text anywhere
// above it (a benchmark can print one) is disarmed. Render does not modify f. Long logs are cut to
// their tail, and then long diffs to their head, so that the body stays
// under MaxBodyRunes.
//
// Whatever looks like a credential is masked in the title and the body
// (secret.Scrub): a token or a URL's password in the logs, an environment
// value whose variable has a secret name (secret.Redact).
func Render(f *record.Finding) (title, body string, err error) {
	return RenderScrubbed(f, nil)
}

// RenderScrubbed is Render that also masks every occurrence of the values
// of secrets (see Filer.Secrets).
func RenderScrubbed(f *record.Finding, secrets []string) (title, body string, err error) {
	if err := validate(f); err != nil {
		return "", "", err
	}
	v := newView(f, secrets)
	name := templateFor(f)
	if v.Logs == "" && v.ParentLogs == "" {
		return v.render(name, f)
	}
	// Measure the body without logs first: the logs get what is left, and
	// only their tail, which is where a benchmark says why it died. They
	// are scrubbed before they are measured, as masking can lengthen them.
	// The bad side's and the parent's logs share what is left.
	logs, parentLogs := v.scrub(f.Logs), v.scrub(f.ParentLogs)
	v.Logs, v.ParentLogs = "", ""
	if _, body, err = v.render(name, f); err != nil {
		return "", "", err
	}
	const logFrame = 300 // the <details> block around a log
	budget := MaxBodyRunes - utf8.RuneCountInString(body) - 2*logFrame
	parentBudget := budget
	if logs != "" {
		parentBudget = min(len(parentLogs), budget/2)
	}
	v.ParentLogs, v.ParentLogsOmitted = logTail(parentLogs, parentBudget)
	v.Logs, v.LogsOmitted = logTail(logs, budget-len(v.ParentLogs))
	return v.render(name, f)
}

// render executes the template, cutting long diffs until the body fits.
func (v *view) render(name string, f *record.Finding) (title, body string, err error) {
	for _, lines := range []int{0, 80, 20} {
		v.DiffLines = lines
		if body, err = v.execute(name); err != nil {
			return "", "", err
		}
		if utf8.RuneCountInString(body) <= MaxBodyRunes {
			return v.Title, body, nil
		}
	}
	return "", "", fmt.Errorf("render finding %s: body has %d characters with diffs cut, more than %d", findingID(f), utf8.RuneCountInString(body), MaxBodyRunes)
}

func validate(f *record.Finding) error {
	if f == nil {
		return errors.New("render finding: nil finding")
	}
	if f.Metric == "" {
		return errors.New("render finding: metric is empty")
	}
	switch f.Outcome {
	case record.OutcomeCulprit:
		if len(f.Culprits) == 0 {
			return fmt.Errorf("render finding %s: outcome %q without culprits", findingID(f), f.Outcome)
		}
	case record.OutcomeCandidates:
		if len(f.Candidates) == 0 {
			return fmt.Errorf("render finding %s: outcome %q without candidates", findingID(f), f.Outcome)
		}
	case record.OutcomeBuildBroken, record.OutcomeMissingData:
		if len(f.Candidates) == 0 {
			return fmt.Errorf("render finding %s: outcome %q without the nights' tips", findingID(f), f.Outcome)
		}
	case record.OutcomeSpeculationSlower:
		if f.Speculative == nil || len(f.Candidates) == 0 {
			return fmt.Errorf("render finding %s: outcome %q without the breakdown or the nights' tips", findingID(f), f.Outcome)
		}
	case record.OutcomeInconclusive, record.OutcomeNotReproduced:
	default:
		return fmt.Errorf("render finding %s: unknown outcome %q", findingID(f), f.Outcome)
	}
	return nil
}

// findingID is f's id, or the id it will be stored under.
func findingID(f *record.Finding) string {
	if f.ID != "" {
		return f.ID
	}
	return f.DerivedID()
}

// templateFor picks the template of f's outcome.
func templateFor(f *record.Finding) string {
	switch f.Outcome {
	case record.OutcomeCulprit:
		if len(f.Hunks()) > 0 {
			return "culprit_hunks.md.tmpl"
		}
		return "culprit.md.tmpl"
	case record.OutcomeNotReproduced:
		return "not_reproduced.md.tmpl"
	case record.OutcomeBuildBroken, record.OutcomeMissingData:
		return "missing.md.tmpl"
	case record.OutcomeSpeculationSlower:
		return "speculation.md.tmpl"
	default: // candidates, inconclusive
		return "candidates.md.tmpl"
	}
}

// view is what the templates see: the finding and what is derived from it.
type view struct {
	*record.Finding
	Title string
	// FindingID is the finding's id, the one every view shows (its
	// DerivedID when it has none yet); Fingerprint is the marker's.
	FindingID   string
	Fingerprint string
	Marker      string
	// DeltaPct is the change of the bad end's median against the good end's.
	DeltaPct float64
	// AllWarnings are f.Warnings, in words, followed by Warnings(f),
	// without repeats.
	AllWarnings []string
	// Logs is f.Logs, or its tail when the body would be too long.
	Logs        string
	LogsOmitted int
	// ParentLogs is f.ParentLogs, or its tail, in the same way.
	ParentLogs        string
	ParentLogsOmitted int
	// DiffLines limits the lines shown of each hunk; 0 shows all.
	DiffLines int
	// secrets are the values scrub masks besides secret shapes.
	secrets []string
}

func newView(f *record.Finding, secrets []string) *view {
	fp := f.Fingerprint()
	v := &view{
		Finding:     f,
		FindingID:   findingID(f),
		Fingerprint: fp,
		Marker:      marker(fp),
		DeltaPct:    changePct(f.Good.Median, f.Bad.Median),
		AllWarnings: mergeWarnings(record.WarningStrings(f.Warnings), Warnings(f)),
		Logs:        f.Logs,
		ParentLogs:  f.ParentLogs,
		secrets:     secrets,
	}
	v.Title = disarmMarkers(v.scrub(title(f, v.DeltaPct)))
	return v
}

// scrub masks the secrets and the secret shapes in s.
func (v *view) scrub(s string) string { return secret.Scrub(s, v.secrets) }

// execute renders the body and ends it with the marker. Everything above
// the marker is scrubbed and disarmed: logs, diffs, file names and
// environment values come from the benchmark and the repository, where a
// token can leak and a marker line would claim the issue for another
// regression.
func (v *view) execute(name string) (string, error) {
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, name, v); err != nil {
		return "", fmt.Errorf("render finding %s: %w", v.Fingerprint, err)
	}
	return strings.TrimRight(disarmMarkers(v.scrub(b.String())), "\n") + "\n" + v.Marker + "\n", nil
}

// Link is the commit's abbreviated hash as inline code, linked to the
// commit's page when its URL or the finding's CommitURL pattern is known.
func (v *view) Link(c record.Commit) string {
	short := "`" + c.Short() + "`"
	url := c.URL
	if url == "" && v.CommitURL != "" && c.Hash != "" {
		url = fmt.Sprintf(v.CommitURL, c.Hash)
	}
	if url == "" {
		return short
	}
	return "[" + short + "](" + url + ")"
}

// Author names the commit's author as plain text. It never @-mentions:
// the name, the email and a login derived from them are whatever the
// committer wrote (a noreply address is as easy to forge as any other),
// so a mention would let a commit make perfbot ping a stranger.
func (v *view) Author(c record.Commit) string {
	name, login := escapeText(c.Author), escapeText(c.Login)
	switch {
	case login != "" && name != "":
		return name + " (" + login + ")"
	case login != "":
		return login
	case name != "":
		return name
	}
	return "unknown"
}

// hunkView is a hunk with the diff text to show.
type hunkView struct {
	record.Hunk
	Text string
}

// CulpritHunks are the hunks localized inside culprit c, their diffs cut
// to DiffLines lines when the body is too long.
func (v *view) CulpritHunks(c record.Culprit) []hunkView {
	var hs []hunkView
	for _, h := range c.Hunks {
		hs = append(hs, hunkView{Hunk: h, Text: cutLines(h.Diff, v.DiffLines)})
	}
	return hs
}

// descentView is a descent with the diff texts of its hunks to show.
type descentView struct {
	record.Descent
	Hunks []hunkView
}

// DescentOf is descent d with its hunks' diffs cut as a culprit's are.
func (v *view) DescentOf(d record.Descent) descentView {
	dv := descentView{Descent: d}
	for _, h := range d.Hunks {
		dv.Hunks = append(dv.Hunks, hunkView{Hunk: h, Text: cutLines(h.Diff, v.DiffLines)})
	}
	return dv
}

// CulpritList is "2 culprits: −3.1% at X, −2.8% at Y".
func (v *view) CulpritList() string {
	parts := make([]string, len(v.Culprits))
	for i, c := range v.Culprits {
		parts[i] = formatPct(c.Effect.Pct) + " at " + v.Link(c.Commit)
	}
	return fmt.Sprintf("%d culprits: %s", len(v.Culprits), strings.Join(parts, ", "))
}

// ComponentList names the components of the change in bold.
func (v *view) ComponentList() string {
	cs := Components(v.Finding)
	for i, c := range cs {
		cs[i] = "**" + escapeText(c) + "**"
	}
	return strings.Join(cs, ", ")
}

// SkipStatus is why skipped commit c was not measured, from its probe.
func (v *view) SkipStatus(c record.Commit) string {
	for _, p := range v.Probes {
		if p.Commit.Hash == c.Hash && p.Status != "" && p.Status != "ok" {
			return p.Status
		}
	}
	return "skipped"
}

// HistoryMin is the smallest value of History.
func (v *view) HistoryMin() float64 { return extreme(v.History, math.Min, math.Inf(1)) }

// HistoryMax is the largest value of History.
func (v *view) HistoryMax() float64 { return extreme(v.History, math.Max, math.Inf(-1)) }

func extreme(xs []float64, pick func(a, b float64) float64, start float64) float64 {
	m := start
	for _, x := range xs {
		if !math.IsNaN(x) {
			m = pick(m, x)
		}
	}
	return m
}

// EnvText is the good end's environment as NAME=value lines, the values
// of secret variables masked.
func (v *view) EnvText() string {
	var b strings.Builder
	for _, k := range v.EnvNames() {
		b.WriteString(k + "=" + secret.Redact(k, v.EnvGood[k]) + "\n")
	}
	return b.String()
}

// EnvDiffRows are EnvDiffs, the values of secret variables masked.
func (v *view) EnvDiffRows() []record.EnvDiff {
	rows := make([]record.EnvDiff, len(v.EnvDiffs))
	for i, d := range v.EnvDiffs {
		rows[i] = record.EnvDiff{Name: d.Name, Good: secret.Redact(d.Name, d.Good), Bad: secret.Redact(d.Name, d.Bad)}
	}
	return rows
}

// ReproduceText is the reproduction commands, one a line.
func (v *view) ReproduceText() string { return strings.Join(v.Reproduce, "\n") }

func cutLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if n <= 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n… %d more lines", len(lines)-n)
}

// otherWay is the change between the ends of a finding that was not
// reproduced in the direction searched but is there the other way.
type otherWay struct {
	Direction record.Direction
	Effect    record.Effect
	// Command searches it.
	Command string
}

// OtherWay is the change the other way between the ends of a finding that
// was not reproduced, from its record.WarnOtherDirection; nil when there
// is none.
func (v *view) OtherWay() *otherWay {
	w, ok := record.OtherDirection(v.Warnings)
	if v.Outcome != record.OutcomeNotReproduced || !ok {
		return nil
	}
	return &otherWay{Direction: w.Direction, Effect: w.Change(), Command: w.Command(v.Metric)}
}

// EffectShare is the applied-alone effect of c's hunks as a share of c's
// effect, or 0 when that comparison means nothing.
func (v *view) EffectShare(c record.Culprit) float64 {
	if c.HunkEffect == nil || c.HunkEffect.Applied == nil || c.Effect.Pct == 0 {
		return 0
	}
	share := c.HunkEffect.Applied.Pct / c.Effect.Pct * 100
	if share <= 0 {
		return 0
	}
	return share
}

// EnvNames are the keys of EnvGood in order.
func (v *view) EnvNames() []string {
	names := make([]string, 0, len(v.EnvGood))
	for k := range v.EnvGood {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// title names the metric, the change and where it is.
func title(f *record.Finding, deltaPct float64) string {
	switch f.Outcome {
	case record.OutcomeCulprit:
		if len(f.Culprits) == 1 {
			c := f.Culprits[0]
			return fmt.Sprintf("%s %s at %s%s", f.Metric, formatPct(c.Effect.Pct), c.Commit.Short(), componentSuffix(f))
		}
		parts := make([]string, len(f.Culprits))
		for i, c := range f.Culprits {
			parts[i] = formatPct(c.Effect.Pct) + " at " + c.Commit.Short()
		}
		return fmt.Sprintf("%s %d culprits: %s%s", f.Metric, len(f.Culprits), strings.Join(parts, ", "), componentSuffix(f))
	case record.OutcomeCandidates:
		return fmt.Sprintf("%s %s in %d candidate commits %s..%s", f.Metric, formatPct(deltaPct), len(f.Candidates), f.Good.Commit.Short(), f.Bad.Commit.Short())
	case record.OutcomeBuildBroken:
		return fmt.Sprintf("%s: build broken since %s", f.Metric, f.Candidates[0].Short())
	case record.OutcomeMissingData:
		return fmt.Sprintf("%s: missing data since %s", f.Metric, f.Candidates[0].Short())
	case record.OutcomeSpeculationSlower:
		b := f.Speculative.Bad
		tokens := ""
		if f.Speculative.Tokens > 0 {
			tokens = fmt.Sprintf(" of %d tokens", f.Speculative.Tokens)
		}
		return fmt.Sprintf("%s: speculation costs %.0f%% at %s: break-even acceptance %s%s, measured %s",
			f.Metric, b.CostPct(), f.Bad.Commit.Short(), formatNum(b.BreakEven.Median), tokens, formatNum(b.Accept.Median))
	case record.OutcomeInconclusive:
		return fmt.Sprintf("%s %s between %s and %s (inconclusive)", f.Metric, formatPct(deltaPct), f.Good.Commit.Short(), f.Bad.Commit.Short())
	default:
		if w, ok := record.OtherDirection(f.Warnings); ok {
			return fmt.Sprintf("%s: no %s between %s and %s, but %s of %s the other way", f.Metric, f.Direction, f.Good.Commit.Short(), f.Bad.Commit.Short(), w.Direction.Indefinite(), formatPct(w.Pct))
		}
		return fmt.Sprintf("%s: change between %s and %s not reproduced", f.Metric, f.Good.Commit.Short(), f.Bad.Commit.Short())
	}
}

func componentSuffix(f *record.Finding) string {
	cs := Components(f)
	if len(cs) == 0 {
		return ""
	}
	return " (" + strings.Join(cs, ", ") + ")"
}

// Components are f.Components, else the components of its hunks, in order
// and without repeats.
func Components(f *record.Finding) []string {
	src := f.Components
	if len(src) == 0 {
		for _, h := range f.Hunks() {
			src = append(src, h.Component)
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, c := range src {
		if c != "" && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

func changePct(good, bad float64) float64 {
	if good == 0 || math.IsNaN(good) || math.IsNaN(bad) {
		return math.NaN()
	}
	return (bad/good - 1) * 100
}

func mergeWarnings(lists ...[]string) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range lists {
		for _, w := range l {
			if w != "" && !seen[w] {
				seen[w] = true
				out = append(out, w)
			}
		}
	}
	return out
}

// marker is the hidden line that identifies the regression in an issue
// body. Render writes it as the body's last line and nowhere else.
func marker(fp string) string {
	return "<!-- perfbot:fingerprint=" + fp + " -->"
}

var (
	markerRE = regexp.MustCompile(`^<!-- perfbot:fingerprint=([0-9a-zA-Z]+) -->$`)
	// markerWordRE matches what a lenient reader could take for a marker.
	markerWordRE = regexp.MustCompile(`(?i)(perfbot\s*:)(\s*fingerprint)`)
)

// fingerprintIn returns the fingerprint of body's marker: its last line
// that is not blank, where Render puts it. A marker anywhere else was not
// written there by perfbot (issues filed before markers were disarmed can
// quote one in their logs), and a person who appends to the body moves the
// marker off the last line; the store's issue index still finds the issue.
func fingerprintIn(body string) (string, bool) {
	body = strings.TrimRight(body, " \t\r\n")
	last := body[strings.LastIndexByte(body, '\n')+1:]
	m := markerRE.FindStringSubmatch(strings.TrimSpace(last))
	if m == nil {
		return "", false
	}
	return m[1], true
}

// disarmMarkers puts a word joiner (U+2060, invisible) into every
// "perfbot:fingerprint" of s, so that no text a benchmark printed reads as
// a marker; the text still shows as it was printed.
func disarmMarkers(s string) string {
	return markerWordRE.ReplaceAllString(s, "${1}\u2060${2}")
}

// logTail returns the last keep bytes of log, starting at a line, and how
// many bytes it left out.
func logTail(log string, keep int) (string, int) {
	if keep <= 0 {
		return "", len(log)
	}
	if keep >= len(log) {
		return log, 0
	}
	cut := len(log) - keep
	if i := strings.IndexByte(log[cut:], '\n'); i >= 0 {
		cut += i + 1
	}
	for cut < len(log) && !utf8.RuneStart(log[cut]) {
		cut++
	}
	return log[cut:], cut
}

// formatNum prints a measured value as every view of perfbot does.
func formatNum(v float64) string { return num.Format(v) }

// formatPct prints a signed percentage with a true minus sign.
func formatPct(p float64) string {
	if math.IsNaN(p) || math.IsInf(p, 0) {
		return "n/a"
	}
	s := fmt.Sprintf("%+.1f%%", p)
	if s == "+0.0%" || s == "-0.0%" {
		return "0.0%"
	}
	return strings.Replace(s, "-", "−", 1)
}

func formatCI(lo, hi float64) string {
	if lo == 0 && hi == 0 {
		return "n/a"
	}
	return "[" + formatPct(lo) + ", " + formatPct(hi) + "]"
}

// formatEffect prints a change with its interval: "−14.8% [−15.6%, −14.0%]".
func formatEffect(e record.Effect) string { return formatPct(e.Pct) + " " + formatCI(e.Lo, e.Hi) }

// formatMeasured prints an effect that may not have been measured: "not
// measured", never a zero, when it was not.
func formatMeasured(e *record.Effect) string {
	if e == nil {
		return "not measured"
	}
	return formatEffect(*e)
}

func formatDate(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

func formatSeconds(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(time.Second).String()
}

// escapeText makes text from commits safe to inline in Markdown: it cannot
// open HTML, links or emphasis, break a table, or @-mention anyone.
func escapeText(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '|', '#':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '@':
			b.WriteRune(r)
			// A zero-width joiner after @ keeps GitHub from mentioning.
			if i+1 < len(s) {
				b.WriteRune('\u2060')
			}
		case '\n', '\r':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// codeSpan wraps s in a code span that its own backticks cannot close.
func codeSpan(s string) string {
	s = strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
	ticks := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return ticks + s + ticks
}

// tableCell is a code span whose pipes cannot end the table cell.
func tableCell(s string) string {
	if s == "" {
		return "*(unset)*"
	}
	return strings.ReplaceAll(codeSpan(s), "|", `\|`)
}

// fenced is s as a fenced code block whose fence no line of s can close.
func fenced(lang, s string) string {
	ticks := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	return ticks + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + ticks
}

func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

var sparkLevels = []rune("▁▂▃▄▅▆▇█")

// sparkline draws values scaled between their minimum and maximum; missing
// values (NaN) are gaps.
func sparkline(values []float64) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range values {
		if !math.IsNaN(x) {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	var b strings.Builder
	for _, x := range values {
		switch {
		case math.IsNaN(x):
			b.WriteRune(' ')
		case hi == lo:
			b.WriteRune(sparkLevels[len(sparkLevels)/2])
		default:
			i := int(math.Round((x - lo) / (hi - lo) * float64(len(sparkLevels)-1)))
			b.WriteRune(sparkLevels[i])
		}
	}
	return b.String()
}

// hunkLines is the hunk's line range in the culprit's version of the file.
func hunkLines(h record.Hunk) string {
	switch {
	case h.NewLines == 0:
		return fmt.Sprintf("lines %d–%d removed", h.OldStart, h.OldStart+max(h.OldLines, 1)-1)
	case h.NewLines == 1:
		return fmt.Sprintf("line %d", h.NewStart)
	}
	return fmt.Sprintf("lines %d–%d", h.NewStart, h.NewStart+h.NewLines-1)
}
