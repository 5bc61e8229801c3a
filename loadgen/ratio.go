package loadgen

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Ratio is a metric computed from two of the server's counters over the
// load: Scale · Δnum / Δden, such as the mean time of a verify step
// (seconds spent over steps taken, times 1000 for ms).
type Ratio struct {
	Name  string
	Num   string
	Den   string
	Scale float64
}

var ratioName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ParseRatio reads NAME=NUM/DEN or NAME=NUM/DEN*SCALE, NUM and DEN being
// counter names (with or without _total).
func ParseRatio(s string) (Ratio, error) {
	name, expr, ok := strings.Cut(s, "=")
	if !ok || !ratioName.MatchString(name) {
		return Ratio{}, fmt.Errorf("server ratio %q: want NAME=NUM/DEN[*SCALE] with NAME of letters, digits and _", s)
	}
	r := Ratio{Name: name, Scale: 1}
	if e, scale, ok := strings.Cut(expr, "*"); ok {
		v, err := strconv.ParseFloat(scale, 64)
		if err != nil || !(v > 0) || v > 1e18 {
			return Ratio{}, fmt.Errorf("server ratio %q: scale %q is not a positive number", s, scale)
		}
		expr, r.Scale = e, v
	}
	num, den, ok := strings.Cut(expr, "/")
	if !ok || num == "" || den == "" || strings.ContainsAny(num+den, " /") {
		return Ratio{}, fmt.Errorf("server ratio %q: want NUM/DEN, two counter names", s)
	}
	r.Num, r.Den = num, den
	return r, nil
}

// ratios adds every ratio of rs computable from the scrapes to m, and
// returns notes for those that are not.
func ratios(rs []Ratio, before, after scrape, m map[string]float64) []string {
	var notes []string
	for _, r := range rs {
		n0, _, ok0 := before.sum(r.Num)
		n1, _, ok1 := after.sum(r.Num)
		d0, _, ok2 := before.sum(r.Den)
		d1, _, ok3 := after.sum(r.Den)
		switch {
		case !ok0 || !ok1 || !ok2 || !ok3:
			notes = append(notes, fmt.Sprintf("server ratio %s: %s or %s is not in the server's metrics", r.Name, r.Num, r.Den))
		case d1 <= d0:
			notes = append(notes, fmt.Sprintf("server ratio %s: %s did not grow during the load", r.Name, r.Den))
		default:
			m[r.Name] = r.Scale * (n1 - n0) / (d1 - d0)
		}
	}
	return notes
}
