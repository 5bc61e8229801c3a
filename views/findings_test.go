package views

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/record"
)

func TestListFindings(t *testing.T) {
	older := culpritFinding(strings.Repeat("1", 40), 0.995)
	newer := culpritFinding(strings.Repeat("2", 40), 0.97)
	newer.Created = older.Created.Add(time.Hour)
	newer.State, newer.Issue = record.StateFiled, 4
	tests := []struct {
		name   string
		stored []record.Finding
		want   []string // ids, in order
	}{
		{name: "none", want: []string{}},
		{name: "newest first, with their issues", stored: []record.Finding{older, newer}, want: []string{newer.ID, older.ID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := openViews(t)
			for _, f := range tt.stored {
				require.NoError(t, w.Store.PutFinding(f))
			}
			fs, err := w.ListFindings(context.Background())
			require.NoError(t, err)
			require.NotNil(t, fs, "none is an empty list, for JSON")
			ids := []string{}
			for _, f := range fs {
				ids = append(ids, f.ID)
				if f.ID == newer.ID {
					require.Equal(t, 4, f.Issue)
					require.Equal(t, record.StateFiled, f.State)
				}
			}
			require.Equal(t, tt.want, ids)
		})
	}
}

func TestFindingByName(t *testing.T) {
	// Two ids that share a prefix.
	a := culpritFinding(strings.Repeat("a", 40), 0.995)
	b := culpritFinding(strings.Repeat("b", 40), 0.995)
	a.ID, b.ID = "ab12345678", "ab98765432"
	shared := commonPrefix(a.ID, b.ID)
	tests := []struct {
		name      string
		lookup    string
		want      string
		wantInput string
	}{
		{name: "the whole id", lookup: a.ID, want: a.ID},
		{name: "a unique prefix", lookup: b.ID[:len(shared)+1], want: b.ID},
		{name: "a prefix both share", lookup: shared, wantInput: "ambiguous"},
		{name: "no such finding", lookup: "zz", wantInput: "no finding"},
		{name: "no such finding, named as an older perfbot did", lookup: "perfbotfpzz", wantInput: "no finding"},
		{name: "no name", lookup: "", wantInput: "no finding"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := openViews(t)
			require.NoError(t, w.Store.PutFinding(a))
			require.NoError(t, w.Store.PutFinding(b))
			f, err := w.Finding(context.Background(), tt.lookup)
			if tt.wantInput != "" {
				var ie *record.InputError
				require.True(t, errors.As(err, &ie), "input error: %v", err)
				require.ErrorContains(t, err, tt.wantInput)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, f.ID)
		})
	}
}

func commonPrefix(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return a[:i]
}
