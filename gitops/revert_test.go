package gitops_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/gitops/gitopstest"
)

// RevertOnto undoes a culprit's hunks on a tip many commits later: on a
// tip whose later commits leave the hunks alone the revert is a commit on
// the tip that holds the culprit's parent's lines; where a later commit
// moved the lines around the hunk a three-way merge still reverts it;
// where a later commit builds on the culprit's lines it conflicts and
// names the file; where a later commit already undid the change it says
// so.
func TestRevertOnto(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name string
		// later edits engine.go in the commits after the culprit (nil:
		// they touch other files only).
		later    map[int]string
		hunkOnly bool // revert the engine.go hunk only, not the whole commit
		want     string
		wantErr  error
		conflict []string
		// files and undone are the revert's, when not the default.
		files, undone []string
	}{
		{name: "restores on a tip 20 commits later", want: numberedLines(40, nil)},
		{name: "only the chosen hunk", hunkOnly: true, want: numberedLines(40, nil)},
		{name: "later commits moved its context", later: map[int]string{2: "line 2 moved\n"},
			want: numberedLines(40, map[int]string{2: "line 2 moved\n"})},
		{name: "a later commit builds on it", later: map[int]string{20: "line 20 slow, tuned\n"},
			conflict: []string{"engine.go"}},
		{name: "a later commit undid it", later: map[int]string{20: "line 20\n"}, hunkOnly: true, wantErr: gitops.ErrNotOnTip},
		{name: "a later commit undid part of it", later: map[int]string{20: "line 20\n"},
			want: numberedLines(40, nil), undone: []string{"engine.go"}, files: []string{"README"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := gitopstest.NewBuilder(t)
			parent := b.Commit("base", map[string]string{"engine.go": numberedLines(40, nil), "README": "r\n"})
			culprit := b.Commit("slow", map[string]string{
				"engine.go": numberedLines(40, map[int]string{20: "line 20 slow\n"}),
				"README":    "r2\n",
			})
			for i := range 20 {
				files := map[string]string{"other.txt": fmt.Sprintf("%d\n", i)}
				if i == 10 && tt.later != nil {
					files["engine.go"] = numberedLines(40, merge(map[int]string{20: "line 20 slow\n"}, tt.later))
				}
				b.Commit(fmt.Sprintf("later %d", i), files)
			}
			tip := b.Head()
			r := open(t, b.Dir)
			p, err := r.Diff(ctx, parent, culprit)
			require.NoError(t, err)
			var ids []string
			if tt.hunkOnly {
				for _, h := range p.Hunks() {
					if h.File == "engine.go" {
						ids = append(ids, h.ID)
					}
				}
			}
			rev, err := r.RevertOnto(ctx, tip, p, ids, "f1", "Revert \"slow\"\n")
			var conflict *gitops.RevertConflict
			switch {
			case tt.wantErr != nil:
				require.ErrorIs(t, err, tt.wantErr)
				return
			case tt.conflict != nil:
				require.ErrorAs(t, err, &conflict)
				assert.Equal(t, tt.conflict, conflict.Files)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tip, rev.Tip.Hash)
			assert.Equal(t, tt.want, gitIn(t, r.Dir(), "", "show", rev.Commit+":engine.go"))
			assert.Equal(t, tip+"\n", gitIn(t, r.Dir(), "", "rev-parse", rev.Commit+"^"))
			assert.Equal(t, rev.Commit+"\n", gitIn(t, r.Dir(), "", "rev-parse", gitops.RevertRefPrefix+"f1"))
			wantFiles := []string{"README", "engine.go"}
			if tt.hunkOnly {
				wantFiles = []string{"engine.go"}
			}
			if tt.files != nil {
				wantFiles = tt.files
			} else {
				assert.Contains(t, rev.Diff, "-line 20 slow\n+line 20\n")
			}
			assert.Equal(t, wantFiles, rev.Files)
			assert.Equal(t, tt.undone, rev.Undone)
			c, err := r.Resolve(ctx, rev.Commit)
			require.NoError(t, err, "the clone sees the revert commit")
			assert.Equal(t, `Revert "slow"`, c.Subject)

			again, err := r.RevertOnto(ctx, tip, p, ids, "f1", "Revert \"slow\"\n")
			require.NoError(t, err)
			assert.Equal(t, rev.Commit, again.Commit, "the same revert on the same tip is the same commit")
		})
	}
}

func TestRevertOntoRejectsBadRefName(t *testing.T) {
	t.Parallel()
	src, commits := gitopstest.NewRepo(t, 3)
	r := open(t, src)
	p, err := r.Diff(context.Background(), commits[0], commits[1])
	require.NoError(t, err)
	for _, name := range []string{"", "../x", "a..b", "-x", "a/.b", "x.lock", "a b"} {
		_, err := r.RevertOnto(context.Background(), commits[2], p, nil, name, "m")
		assert.ErrorContains(t, err, "is not a ref name", name)
	}
}

func merge(a, b map[int]string) map[int]string {
	out := map[int]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
