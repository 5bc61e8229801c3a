package loadgen

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// BenchmarkReadStream is the client's work per request besides the
// network: reading a stream of 16 text chunks, a usage chunk and [DONE].
func BenchmarkReadStream(b *testing.B) {
	var s strings.Builder
	for range 16 {
		s.WriteString(`data: {"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":" tok"}]}` + "\n\n")
	}
	s.WriteString(usageChunk + done)
	stream := []byte(s.String())
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		var res result
		if err := readStream(bytes.NewReader(stream), &res, time.Now); err != nil {
			b.Fatal(err)
		}
	}
}
