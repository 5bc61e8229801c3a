package gitops

import (
	"regexp"
	"strings"
)

// semverRE is a canonical semantic version as Go modules write it:
// vMAJOR.MINOR.PATCH with an optional pre-release and build suffix.
var semverRE = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?$`)

type semver struct{ major, minor, patch, pre string }

func parseSemver(v string) (semver, bool) {
	m := semverRE.FindStringSubmatch(v)
	if m == nil {
		return semver{}, false
	}
	return semver{major: m[1], minor: m[2], patch: m[3], pre: m[4]}, true
}

// IsSemver reports whether v is a semantic version as Go modules write
// it ("v1.2.3", "v1.2.3-rc.1", "v0.0.0-20260101000000-abcdefabcdef").
func IsSemver(v string) bool {
	_, ok := parseSemver(v)
	return ok
}

// CompareSemver orders two semantic versions by semver's precedence (the
// build suffix does not count); a version that is not one sorts first.
func CompareSemver(a, b string) int {
	return compareParsed(a, b, parseSemver, compareSemver)
}

func compareSemver(x, y semver) int {
	for _, p := range [][2]string{{x.major, y.major}, {x.minor, y.minor}, {x.patch, y.patch}} {
		if c := compareDecimal(p[0], p[1]); c != 0 {
			return c
		}
	}
	switch {
	case x.pre == y.pre:
		return 0
	case x.pre == "":
		return 1
	case y.pre == "":
		return -1
	}
	xs, ys := strings.Split(x.pre, "."), strings.Split(y.pre, ".")
	for i := 0; i < len(xs) && i < len(ys); i++ {
		if c := comparePrerelease(xs[i], ys[i]); c != 0 {
			return c
		}
	}
	return compareInt(len(xs), len(ys))
}

// comparePrerelease orders two identifiers of a pre-release: numbers by
// value and before words, words in ASCII order.
func comparePrerelease(a, b string) int {
	na, nb := isDecimal(a), isDecimal(b)
	switch {
	case na && nb:
		return compareDecimal(a, b)
	case na:
		return -1
	case nb:
		return 1
	}
	return strings.Compare(a, b)
}

func isDecimal(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// compareDecimal orders decimal numbers of any length without leading
// zeros.
func compareDecimal(a, b string) int {
	if c := compareInt(len(a), len(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func compareInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// incDecimal adds one to a decimal number of any length.
func incDecimal(s string) string {
	b := []byte(s)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < '9' {
			b[i]++
			return string(b)
		}
		b[i] = '0'
	}
	return "1" + string(b)
}

// compareParsed orders two version strings by cmp once parse reads both;
// a string that does not parse sorts before one that does, and two that
// do not sort as strings.
func compareParsed[V any](a, b string, parse func(string) (V, bool), cmp func(V, V) int) int {
	x, okA := parse(a)
	y, okB := parse(b)
	switch {
	case !okA && !okB:
		return strings.Compare(a, b)
	case !okA:
		return -1
	case !okB:
		return 1
	}
	return cmp(x, y)
}
