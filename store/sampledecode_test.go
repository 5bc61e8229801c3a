package store

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// decodeSample agrees with json.Unmarshal on what json.Marshal writes,
// the fast path and the fallback alike.
func TestDecodeSample(t *testing.T) {
	for _, tt := range []struct {
		name string
		rec  sampleRecord
		fast bool
	}{
		{name: "plain", rec: sampleRecord{Value: 812.5, Commit: "3f2a9c1e", TargetKey: "ab12", SpecHash: "cd34", Host: "gpu1", Status: "ok", Plain: true}, fast: true},
		{name: "not plain", rec: sampleRecord{Value: 12, Commit: "3f2a", TargetKey: "k", SpecHash: "s", Host: "h", Status: "ok"}, fast: true},
		{name: "tiny and huge values", rec: sampleRecord{Value: 1.5e-9, Commit: "c", Host: "h", Status: "ok", Plain: true}, fast: true},
		{name: "huge", rec: sampleRecord{Value: math.MaxFloat64, Commit: "c", Plain: true}, fast: true},
		{name: "negative", rec: sampleRecord{Value: -3.25, Commit: "c", Plain: true}, fast: true},
		{name: "empty strings", rec: sampleRecord{Value: 1, Plain: true}, fast: true},
		{name: "a quote in the host", rec: sampleRecord{Value: 1, Host: `gpu "one"`, Plain: true}},
		{name: "a unicode host", rec: sampleRecord{Value: 1, Host: "gpu<1>&é", Plain: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data, err := json.Marshal(tt.rec)
			require.NoError(t, err)
			_, fast := fastSample(data)
			require.Equal(t, tt.fast, fast, "%s", data)
			got, err := decodeSample(data)
			require.NoError(t, err)
			require.Equal(t, tt.rec, got)
		})
	}
	_, err := decodeSample([]byte(`{"v":`))
	require.Error(t, err, "what neither path reads is an error")
}

// FuzzDecodeSample: whatever the fast path accepts, json.Unmarshal
// decodes to the same record.
func FuzzDecodeSample(f *testing.F) {
	for _, rec := range []sampleRecord{{Value: 812.5, Commit: "3f2a", TargetKey: "k", SpecHash: "s", Host: "gpu1", Status: "ok", Plain: true}, {Value: -1e300}} {
		data, _ := json.Marshal(rec)
		f.Add(data)
	}
	f.Add([]byte(`{"v":1,"commit":"a","target":"b","spec":"c","host":"d","status":"ok","plain":true}x`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := fastSample(data)
		if !ok {
			return
		}
		var want sampleRecord
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("fast path accepted %q, which json.Unmarshal refuses: %v", data, err)
		}
		if got != want {
			t.Fatalf("%q: fast %+v, json %+v", data, got, want)
		}
	})
}
