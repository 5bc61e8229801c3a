package minimize_test

import (
	"context"
	"fmt"
	"math"

	"github.com/perfbot/perfbot/bisect/bisecttest"
	"github.com/perfbot/perfbot/minimize"
	"github.com/perfbot/perfbot/record"
)

// Example isolates the one hunk of eight that makes a tok/s metric 5%
// slower, measured with 2% noise.
func Example() {
	w := bisecttest.OneCulprit(8, 5, math.Log(0.95), 0.02, 1)
	iso, err := minimize.Isolate(context.Background(), w, minimize.Options{
		Groups: []minimize.Group{{Name: "engine.go", Elements: w.Elements}},
		Better: record.Higher,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(iso.Minimal, iso.AppliedOutcome, iso.RevertedOutcome)
	fmt.Println(iso.Applied.Hi < 0, iso.Reverted.Lo > 0)
	// Output:
	// [h05] bad good
	// true true
}
