package bisect_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/bisect/bisecttest"
)

func TestScratchTrace(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("T_N"))
	if n == 0 {
		t.Skip()
	}
	cv, _ := strconv.ParseFloat(os.Getenv("T_CV"), 64)
	trials := []int{0, 1, 2, 3, 4, 5}
	if v := os.Getenv("T_TRIALS"); v != "" {
		trials = nil
		for _, f := range strings.Split(v, ",") {
			x, _ := strconv.Atoi(f)
			trials = append(trials, x)
		}
	}
	for _, trial := range trials {
		r := rand.New(rand.NewPCG(1, uint64(trial)))
		h := &bisecttest.History{Len: n + 1, CV: cv, Changes: []bisecttest.Change{{At: 1 + r.IntN(n), Factor: 0.95}}}
		o := h.Oracle(int64(trial) + 1000003)
		var b strings.Builder
		res, err := bisect.Bisect(context.Background(), h.Chain(), o, bisect.Options{OnProbe: func(e bisect.ProbeEvent) {
			fmt.Fprintf(&b, "%s:%d(%d) %.3f %.2f ", e.Phase[:1], e.Index, e.N, 100*math.Log(e.Median), e.Posterior)
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("truth %v got %v runs %d\n%s", h.Culprits(), res.Culprits, res.Samples, b.String())
	}
}

func TestScratchVerify(t *testing.T) {
	if os.Getenv("T_VER") == "" {
		t.Skip()
	}
	cv, _ := strconv.ParseFloat(os.Getenv("T_CV"), 64)
	notRep, runs := 0, 0
	const trials = 20000
	for trial := range trials {
		h := &bisecttest.History{Len: 2, CV: cv, Changes: []bisecttest.Change{{At: 1, Factor: 0.95}}}
		o := h.Oracle(int64(trial) + 77)
		res, err := bisect.Bisect(context.Background(), h.Chain(), o, bisect.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict == bisect.VerdictNotReproduced {
			notRep++
			if notRep < 30 {
				t.Logf("%d %d %.1f %.1f", res.Good.N, res.Bad.N, res.Good.Median, res.Bad.Median)
			}
		}
		runs += res.Samples
	}
	t.Logf("not reproduced %d/%d, mean runs %.1f", notRep, trials, float64(runs)/trials)
}
