package store

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/perfbot/perfbot/record"
)

// decodeSample decodes a sample as json.Unmarshal does, faster: History
// decodes one per row, and a query over a day of a busy history decodes
// thousands. Samples are written by json.Marshal of a sampleRecord, so
// their fields come in its order as plain strings, a number and a bool;
// the fast path reads exactly that shape and anything else (an escape in
// a string, a field of an older or newer layout) goes to json.Unmarshal.
func decodeSample(data []byte) (sampleRecord, error) {
	if s, ok := fastSample(data); ok {
		return s, nil
	}
	var s sampleRecord
	err := json.Unmarshal(data, &s)
	return s, err
}

func fastSample(data []byte) (s sampleRecord, ok bool) {
	p := sampleParser{data: data}
	if !p.lit(`{"v":`) {
		return s, false
	}
	num := p.until(',')
	if !jsonNumber(num) {
		return s, false
	}
	v, err := strconv.ParseFloat(string(num), 64)
	if err != nil {
		return s, false
	}
	s.Value = v
	var status string
	for _, f := range []struct {
		key string
		dst *string
	}{{`,"commit":`, &s.Commit}, {`,"target":`, &s.TargetKey}, {`,"spec":`, &s.SpecHash}, {`,"host":`, &s.Host}, {`,"status":`, &status}} {
		str, ok := p.field(f.key)
		if !ok {
			return s, false
		}
		*f.dst = str
	}
	s.Status = record.Status(status)
	switch {
	case p.lit(`,"plain":true}`):
		s.Plain = true
	case p.lit(`,"plain":false}`):
	default:
		return s, false
	}
	return s, p.rest() == 0
}

// sampleParser reads a byte slice from the front.
type sampleParser struct {
	data []byte
	at   int
}

func (p *sampleParser) lit(s string) bool {
	if !bytes.HasPrefix(p.data[p.at:], []byte(s)) {
		return false
	}
	p.at += len(s)
	return true
}

// until returns the bytes up to (not including) c, or nil without one.
func (p *sampleParser) until(c byte) []byte {
	i := bytes.IndexByte(p.data[p.at:], c)
	if i < 0 {
		return nil
	}
	b := p.data[p.at : p.at+i]
	p.at += i
	return b
}

// field reads key and a string of printable ASCII without escapes (what
// json.Unmarshal would change, it decodes itself).
func (p *sampleParser) field(key string) (string, bool) {
	if !p.lit(key) || !p.lit(`"`) {
		return "", false
	}
	b := p.until('"')
	if b == nil {
		return "", false
	}
	for _, c := range b {
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return "", false
		}
	}
	p.at++
	return string(b), true
}

// jsonNumber reports whether b is a number as JSON writes one:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func jsonNumber(b []byte) bool {
	i := 0
	digits := func() int {
		n := 0
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}

func (p *sampleParser) rest() int { return len(p.data) - p.at }
