package record

import "testing"

func TestSpecTimeUnit(t *testing.T) {
	for unit, want := range map[string]string{"": "", "ms": "", "ms/token": "", "decode-steps": "decode-steps", "us": "us"} {
		if got := SpecTimeUnit(unit); got != want {
			t.Errorf("SpecTimeUnit(%q) = %q, want %q", unit, got, want)
		}
	}
	if got := (SpecAttribution{}).Unit(); got != "ms" {
		t.Errorf("Unit of no TimeUnit = %q, want ms", got)
	}
}
