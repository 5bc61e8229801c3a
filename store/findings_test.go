package store_test

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/storetest"
)

func finding(id string, created time.Duration) record.Finding {
	return record.Finding{ID: id, Created: t0.Add(created), Metric: "verify_tok_s", Outcome: record.OutcomeCulprit}
}

// TestFindings: a finding is named by its id or any unique prefix of it,
// and by the id an older perfbot gave it (its fingerprint, abbreviated or
// whole, with the suffix some outcomes had).
func TestFindings(t *testing.T) {
	const oldNR = "perfbotfpcc44dd55eeff00112233-nr"
	db := storetest.Open(t)
	for _, f := range []record.Finding{
		finding("aa11223344", time.Hour),
		finding("aa22334455", 3*time.Hour),
		finding("bb33445566", 2*time.Hour),
		finding(record.FindingID(oldNR), -time.Hour),
	} {
		require.NoError(t, db.PutFinding(f))
	}

	all, err := db.Findings()
	require.NoError(t, err)
	var ids []string
	for _, f := range all {
		ids = append(ids, f.ID)
	}
	assert.Equal(t, []string{"aa22334455", "bb33445566", "aa11223344", record.FindingID(oldNR)}, ids, "newest first")

	for _, tc := range []struct {
		name    string
		id      string
		want    string
		wantErr string
	}{
		{name: "full id", id: "aa11223344", want: "aa11223344"},
		{name: "unique prefix", id: "aa2", want: "aa22334455"},
		{name: "ambiguous prefix", id: "a", wantErr: `finding "a": ambiguous id prefix: 2 findings match: aa11223344, aa22334455`},
		{name: "an older perfbot's id", id: "perfbotfpaa11223344556677889900", want: "aa11223344"},
		{name: "an older perfbot's id, abbreviated", id: "perfbotfpbb3", want: "bb33445566"},
		{name: "an older perfbot's id, ambiguous", id: "perfbotfpa", wantErr: `finding "a": ambiguous id prefix: 2 findings match: aa11223344, aa22334455`},
		{name: "an older perfbot's id with its suffix", id: oldNR, want: record.FindingID(oldNR)},
		{name: "unknown", id: "ee"},
		{name: "unknown, an older perfbot's", id: "perfbotfpee"},
		{name: "empty id", id: "", wantErr: "get finding: empty id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, ok, err := db.Finding(tc.id)
			if tc.wantErr != "" {
				require.EqualError(t, err, tc.wantErr)
				if tc.id != "" {
					assert.ErrorIs(t, err, store.ErrAmbiguous)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want != "", ok)
			assert.Equal(t, tc.want, f.ID)
		})
	}
}

func TestFindingRoundTrip(t *testing.T) {
	db := storetest.Open(t)
	f := record.Finding{
		Created: t0, Metric: "verify_tok_s", Unit: "tok/s", Direction: "regression", Outcome: record.OutcomeCulprit,
		Good: record.End{Commit: record.Commit{Hash: commitHash(0)}, N: 5, Median: 88.8, Interval: record.Interval{Lo: 88.1, Hi: 89.2}},
		Bad:  record.End{Commit: record.Commit{Hash: commitHash(9)}, N: 5, Median: 82.2, Interval: record.Interval{Lo: 81.9, Hi: 82.6}},
		Culprits: []record.Culprit{{
			Commit: record.Commit{Hash: commitHash(4), Subject: "communicator: LL"}, Confidence: 0.995, Effect: record.Effect{Pct: -7.4},
			Hunks:      []record.Hunk{{ID: "h1", File: "communicator/allreduce.go", Component: "communicator", Diff: "@@ -1 +1 @@\n-a\n+b\n"}},
			HunkEffect: &record.HunkEffect{Applied: &record.Effect{Pct: -7.1}, Reverted: &record.Effect{Pct: 7.0}},
		}},
		EnvDiffs: []record.EnvDiff{{Name: "NCCL_PROTO", Good: "Simple", Bad: "LL"}},
		State:    record.StateKept,
	}
	f.ID = f.DerivedID()
	require.NoError(t, db.PutFinding(f))
	got, ok, err := db.Finding(f.ID)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, f, got)

	require.ErrorContains(t, db.PutFinding(record.Finding{Metric: "verify_tok_s"}), "no id")
}

func TestIssues(t *testing.T) {
	db := storetest.Open(t)
	_, ok, err := db.IssueFor("perfbotfp01")
	require.NoError(t, err)
	assert.False(t, ok)

	require.NoError(t, db.SetIssue("perfbotfp01", 17))
	n, ok, err := db.IssueFor("perfbotfp01")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, 17, n)

	for _, tc := range []struct {
		name        string
		fingerprint string
		number      int
		wantErr     string
	}{
		{name: "empty fingerprint", number: 3, wantErr: "empty fingerprint"},
		{name: "zero number", fingerprint: "perfbotfp02", wantErr: "number 0 is not a positive issue number"},
		{name: "negative number", fingerprint: "perfbotfp02", number: -4, wantErr: "number -4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorContains(t, db.SetIssue(tc.fingerprint, tc.number), tc.wantErr)
		})
	}
	_, _, err = db.IssueFor("")
	require.ErrorContains(t, err, "empty fingerprint")
}

func TestPutFindingIssue(t *testing.T) {
	for _, tc := range []struct {
		name      string
		finding   record.Finding
		number    int
		wantErr   string
		wantStore bool
	}{
		{name: "finding and issue together", finding: finding("perfbotfp07", 0), number: 21, wantStore: true},
		{name: "bad number stores no finding", finding: finding("perfbotfp07", 0), number: 0, wantErr: "not a positive issue number"},
		{name: "finding without id stores no issue", finding: finding("", 0), number: 21, wantErr: "no id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := storetest.Open(t)
			err := db.PutFindingIssue(tc.finding, tc.number)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
			} else {
				require.NoError(t, err)
			}
			fs, err := db.Findings()
			require.NoError(t, err)
			assert.Equal(t, tc.wantStore, len(fs) == 1, "finding stored")
			if tc.finding.ID != "" {
				n, ok, err := db.IssueFor(tc.finding.Fingerprint())
				require.NoError(t, err)
				assert.Equal(t, tc.wantStore, ok, "issue recorded")
				if tc.wantStore {
					assert.Equal(t, tc.number, n)
				}
			}
		})
	}
}

// TestFindingCommitLinks: a finding is stored with each commit's own URL,
// never the pattern of them (a literal %s in the JSON); one stored by an
// older perfbot with the pattern under "commit_url" is linked as it is
// read.
func TestFindingCommitLinks(t *testing.T) {
	const pattern = "https://github.com/example/infer/commit/%s"
	url := func(n int) string { return "https://github.com/example/infer/commit/" + commitHash(n) }
	for _, tc := range []struct {
		name    string
		pattern string
		raw     string // stored as an older perfbot wrote it, instead of PutFinding
		own     string // the culprit's own URL
		want    []string
	}{
		{name: "linked when stored", pattern: pattern, want: []string{url(0), url(9), url(4), url(5)}},
		{name: "no pattern, no links", want: []string{"", "", "", ""}},
		{name: "a commit's own URL is kept", pattern: pattern, own: "https://mirror.example/c/4", want: []string{url(0), url(9), "https://mirror.example/c/4", url(5)}},
		{name: "an older finding's pattern links as it is read", raw: `{"id":"perfbotfpold","metric":"verify_tok_s","outcome":"culprit","state":"kept",
			"commit_url":"` + pattern + `","good":{"commit":{"hash":"` + commitHash(0) + `"}},"bad":{"commit":{"hash":"` + commitHash(9) + `"}},
			"culprits":[{"commit":{"hash":"` + commitHash(4) + `"}}],"probes":[{"commit":{"hash":"` + commitHash(5) + `"}}]}`,
			want: []string{url(0), url(9), url(4), url(5)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "perfbot.db")
			db, err := store.Open(path)
			require.NoError(t, err)
			f := record.Finding{ID: "perfbotfpold", Metric: "verify_tok_s", Outcome: record.OutcomeCulprit, CommitURL: tc.pattern,
				Good: record.End{Commit: record.Commit{Hash: commitHash(0)}}, Bad: record.End{Commit: record.Commit{Hash: commitHash(9)}},
				Culprits: []record.Culprit{{Commit: record.Commit{Hash: commitHash(4), URL: tc.own}}},
				Probes:   []record.Probe{{Commit: record.Commit{Hash: commitHash(5)}}}}
			if tc.raw == "" {
				require.NoError(t, db.PutFinding(f))
				assert.Equal(t, tc.own, f.Culprits[0].Commit.URL, "the caller's finding is left as it was")
				assert.Empty(t, f.Probes[0].Commit.URL, "the caller's finding is left as it was")
			}
			require.NoError(t, db.Close())
			if tc.raw != "" {
				require.NoError(t, store.WriteRawFinding(path, f.ID, tc.raw, 0, strconv.Itoa(store.SchemaVersion)))
			}
			db, err = store.Open(path)
			require.NoError(t, err)
			defer db.Close()
			got, ok, err := db.Finding(f.ID)
			require.NoError(t, err)
			require.True(t, ok)
			assert.Equal(t, tc.want, []string{got.Good.Commit.URL, got.Bad.Commit.URL, got.Culprits[0].Commit.URL, got.Probes[0].Commit.URL})
			js, err := json.Marshal(got)
			require.NoError(t, err)
			assert.NotContains(t, string(js), "%s")
			assert.NotContains(t, string(js), "commit_url")
		})
	}
}
