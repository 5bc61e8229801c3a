package bisect

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestAnchored(t *testing.T) {
	groups := [][]Run{
		{{Value: 1, Seq: 1}, {Value: 1, Seq: 3}, {Value: 1, Seq: 100}, {Value: 1}},
		{{Value: 1, Seq: 2}, {Value: 1, Seq: 10}, {Value: 1, Seq: 11}, {Value: 1, Seq: 12}, {Value: 1, Seq: 13}, {Value: 1, Seq: 14}, {Value: 1, Seq: 15}},
		{{Value: 1, Seq: 9}},
	}
	got := anchored(groups)
	assert.Equal(t, []bool{true, true, false, false}, got[0], "a run far from the others and a run of unknown time do not count")
	assert.Equal(t, []bool{true, true, true, true, false, false, false}, got[1], "a long row of one commit counts only near its start")
	assert.Equal(t, []bool{true}, got[2])
}

func TestPairs(t *testing.T) {
	a := []Run{{Seq: 1}, {Seq: 5}, {Seq: 20}, {Seq: 30}}
	b := []Run{{Seq: 2}, {Seq: 3}, {Seq: 6}, {Seq: 40}}
	ia, ib := pairs(a, b)
	assert.Equal(t, []int{0, 1}, ia)
	assert.Equal(t, []int{0, 2}, ib)
}

func TestBesidesInTime(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	a := Run{Seq: 10, At: now}
	assert.True(t, besides(a, Run{Seq: 11, At: now.Add(40 * time.Minute)}), "a build between them")
	assert.False(t, besides(a, Run{Seq: 11, At: now.Add(20 * time.Hour)}), "yesterday's last run and today's first")
	assert.True(t, besides(a, Run{Seq: 12}), "time unknown on one side")
	assert.False(t, besides(a, Run{Seq: 14, At: now}))
	assert.False(t, besides(Run{}, Run{}))
}
