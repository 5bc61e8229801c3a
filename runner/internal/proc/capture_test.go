package proc

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The capture keeps what a file read back with its head and tail would
// hold, however the output is cut into writes.
func TestCapture(t *testing.T) {
	for _, tc := range []struct {
		name         string
		size, limit  int
		chunk        int
		wantOmitted  int
		wantTruncate bool
	}{
		{name: "short output", size: 10, limit: 100, chunk: 3},
		{name: "exactly the limit", size: 100, limit: 100, chunk: 7},
		{name: "one byte over", size: 101, limit: 100, chunk: 1, wantOmitted: 1, wantTruncate: true},
		{name: "much longer in small writes", size: 10000, limit: 100, chunk: 13, wantOmitted: 9900, wantTruncate: true},
		{name: "much longer in one write", size: 10000, limit: 100, chunk: 10000, wantOmitted: 9900, wantTruncate: true},
		{name: "an odd limit", size: 1000, limit: 101, chunk: 50, wantOmitted: 899, wantTruncate: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := make([]byte, tc.size)
			for i := range data {
				data[i] = byte('a' + i%26)
			}
			c := NewCapture(tc.limit)
			for i := 0; i < len(data); i += tc.chunk {
				_, err := c.Write(data[i:min(i+tc.chunk, len(data))])
				require.NoError(t, err)
			}
			got, truncated := c.Bytes()
			assert.Equal(t, tc.wantTruncate, truncated)
			want := data
			if tc.wantOmitted > 0 {
				half := tc.limit / 2
				want = append(append(append([]byte(nil), data[:half]...), fmt.Sprintf("\n[perfbot: %d bytes of output omitted]\n", tc.wantOmitted)...), data[len(data)-(tc.limit-half):]...)
			}
			assert.Equal(t, string(want), string(got))
		})
	}
}
