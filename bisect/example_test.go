package bisect_test

import (
	"context"
	"fmt"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/bisect/bisecttest"
	"github.com/perfbot/perfbot/record"
)

// Example runs a whole bisection over a seeded history of 65 commits whose
// commit 40 makes a tok/s metric 5% slower, measured with 2% noise.
func Example() {
	h := &bisecttest.History{Len: 65, CV: 0.02, Changes: []bisecttest.Change{{At: 40, Factor: 0.95}}}
	res, err := bisect.Locate(context.Background(), h.Chain(), h.Oracle(1), bisect.Options{
		Better:    record.Higher,
		Direction: record.Regression,
	})
	if err != nil {
		fmt.Println(err) // a *record.InfraError: retry the job later
		return
	}
	fmt.Println(res.Verdict)
	for _, c := range res.Culprits {
		fmt.Printf("%s %s, confidence at least %.2f, %s\n", c.Commit, c.Direction, bisect.DefaultConfidence, c.Confirmation.Verdict)
		fmt.Println(c.Effect.Lo < -2 && c.Effect.Hi < 0)
	}
	fmt.Println(record.WarningStrings(res.Warnings))
	// Output:
	// culprit
	// c0040 regression, confidence at least 0.98, confirmed
	// true
	// [a second change in c0040..c0064 was not excluded (p=0.36 on the runs at hand; its check took none more, as the runs its budget allows could not decide it)]
}
