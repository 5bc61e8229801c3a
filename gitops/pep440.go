package gitops

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// pep440RE is a Python version as PEP 440 writes it, with the spellings
// its normalization accepts (case, "alpha"/"c"/"pre", separators, a
// leading v): epoch, release, pre-release, post-release, development
// release and local label.
var pep440RE = regexp.MustCompile(`^v?(?:([0-9]+)!)?([0-9]+(?:\.[0-9]+)*)` +
	`(?:[-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?([0-9]*))?` +
	`(?:-([0-9]+)|[-_.]?(post|rev|r)[-_.]?([0-9]*))?` +
	`(?:[-_.]?(dev)[-_.]?([0-9]*))?` +
	`(?:\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?$`)

// The ranks of a pre-release: a development release of a final version
// ("1.0.dev1") comes before every pre-release of it, the final version
// after all of them.
const (
	preDevOnly = -1
	preAlpha   = 0
	preBeta    = 1
	preRC      = 2
	preFinal   = 3
)

// pyVersion is a parsed PEP 440 version, its parts as they compare.
type pyVersion struct {
	epoch   uint64
	release []uint64
	pre     int    // one of the pre ranks
	preN    uint64 // the pre-release's number
	post    int64  // -1 for none
	dev     uint64 // the development release's number; devNone for none
	local   []string
}

const devNone = ^uint64(0)

func parsePEP440(s string) (pyVersion, bool) {
	m := pep440RE.FindStringSubmatch(strings.ToLower(strings.TrimSpace(s)))
	if m == nil {
		return pyVersion{}, false
	}
	num := func(s string) uint64 {
		n, _ := strconv.ParseUint(s, 10, 64) // "" is 0, as PEP 440 reads "1.0a"
		return n
	}
	v := pyVersion{epoch: num(m[1]), pre: preFinal, post: -1, dev: devNone}
	for _, part := range strings.Split(m[2], ".") {
		n, err := strconv.ParseUint(part, 10, 64)
		if err != nil {
			return pyVersion{}, false
		}
		v.release = append(v.release, n)
	}
	// Trailing zeros do not count: 2.4 is 2.4.0.
	for len(v.release) > 1 && v.release[len(v.release)-1] == 0 {
		v.release = v.release[:len(v.release)-1]
	}
	switch m[3] {
	case "a", "alpha":
		v.pre = preAlpha
	case "b", "beta":
		v.pre = preBeta
	case "rc", "c", "pre", "preview":
		v.pre = preRC
	}
	v.preN = num(m[4])
	switch {
	case m[5] != "":
		v.post = int64(num(m[5]))
	case m[6] != "":
		v.post = int64(num(m[7]))
	}
	if m[8] != "" {
		v.dev = num(m[9])
		if m[3] == "" && v.post < 0 {
			v.pre = preDevOnly
		}
	}
	if m[10] != "" {
		v.local = strings.FieldsFunc(m[10], func(r rune) bool { return r == '.' || r == '-' || r == '_' })
	}
	return v, true
}

// IsPythonVersion reports whether v is a version as PEP 440 writes it.
func IsPythonVersion(v string) bool {
	_, ok := parsePEP440(v)
	return ok
}

// ComparePythonVersions orders two Python versions as PEP 440 does:
// release segments by number (2.10 after 2.9, 2.4 equal to 2.4.0), a
// version's development releases first, then its a, b and rc
// pre-releases, then the version, then its .postN releases; a local
// label ("+cu128") sorts after the same version without one. A version
// that is not one sorts first.
func ComparePythonVersions(a, b string) int {
	return compareParsed(a, b, parsePEP440, comparePEP440)
}

func comparePEP440(x, y pyVersion) int {
	if c := cmpUint(x.epoch, y.epoch); c != 0 {
		return c
	}
	for i := 0; i < max(len(x.release), len(y.release)); i++ {
		if c := cmpUint(segment(x.release, i), segment(y.release, i)); c != 0 {
			return c
		}
	}
	if c := compareInt(x.pre, y.pre); c != 0 {
		return c
	}
	if c := cmpUint(x.preN, y.preN); c != 0 {
		return c
	}
	if c := compareInt(int(x.post), int(y.post)); c != 0 {
		return c
	}
	if c := cmpUint(x.dev, y.dev); c != 0 {
		return c
	}
	return compareLocal(x.local, y.local)
}

func segment(r []uint64, i int) uint64 {
	if i < len(r) {
		return r[i]
	}
	return 0
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareLocal orders local labels as PEP 440 does: none first, then
// segment by segment, numbers by value and after words, words in ASCII
// order, a label before a longer one it begins.
func compareLocal(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		na, nb := isDecimal(a[i]), isDecimal(b[i])
		switch {
		case na && nb:
			x, _ := strconv.ParseUint(a[i], 10, 64)
			y, _ := strconv.ParseUint(b[i], 10, 64)
			if c := cmpUint(x, y); c != 0 {
				return c
			}
		case na:
			return 1
		case nb:
			return -1
		default:
			if c := strings.Compare(a[i], b[i]); c != 0 {
				return c
			}
		}
	}
	return compareInt(len(a), len(b))
}

// PythonPackageName is a Python package's name as PEP 503 compares
// them: lower case, each run of "-", "_" and "." one "-".
func PythonPackageName(name string) string {
	return strings.ToLower(pythonNameSeparators.ReplaceAllString(name, "-"))
}

var pythonNameSeparators = regexp.MustCompile(`[-_.]+`)

// WheelVersion is the package name (as PythonPackageName writes it) and
// the version of a wheel's file name,
// {name}-{version}(-{build})?-{python}-{abi}-{platform}.whl, and whether
// the name is one.
func WheelVersion(file string) (name, version string, ok bool) {
	base, ok := strings.CutSuffix(file, ".whl")
	if !ok {
		return "", "", false
	}
	parts := strings.Split(base, "-")
	if len(parts) != 5 && len(parts) != 6 {
		return "", "", false
	}
	if parts[0] == "" || !IsPythonVersion(parts[1]) {
		return "", "", false
	}
	return PythonPackageName(parts[0]), parts[1], true
}

// WheelVersions lists the versions of package pkg that the wheels in dir
// hold, from old to new, both included and both required: the versions
// between the two in PEP 440 order (from new to old for a downgrade).
// Wheels of other packages, and files that are not wheels, are left
// out; two wheels of one version (two platforms) give it once.
func WheelVersions(dir, pkg, old, new string) ([]string, error) {
	if !IsPythonVersion(old) || !IsPythonVersion(new) {
		return nil, fmt.Errorf("versions of %s: %q..%q are not PEP 440 versions", pkg, old, new)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("versions of %s: read the wheels directory: %w", pkg, err)
	}
	pkg = PythonPackageName(pkg)
	lo, hi := old, new
	if ComparePythonVersions(lo, hi) > 0 {
		lo, hi = hi, lo
	}
	var versions []string
	for _, e := range entries {
		name, v, ok := WheelVersion(e.Name())
		if !ok || e.IsDir() || name != pkg {
			continue
		}
		if ComparePythonVersions(v, lo) >= 0 && ComparePythonVersions(v, hi) <= 0 {
			versions = append(versions, v)
		}
	}
	slices.SortStableFunc(versions, ComparePythonVersions)
	versions = slices.CompactFunc(versions, func(a, b string) bool { return ComparePythonVersions(a, b) == 0 })
	for _, end := range []string{old, new} {
		if !slices.ContainsFunc(versions, func(v string) bool { return ComparePythonVersions(v, end) == 0 }) {
			return nil, fmt.Errorf("versions of %s: %s holds no wheel of %s %s", pkg, dir, pkg, end)
		}
	}
	// The ends are spelled as the pins spell them.
	versions[0], versions[len(versions)-1] = lo, hi
	if ComparePythonVersions(old, new) > 0 {
		slices.Reverse(versions)
	}
	return versions, nil
}
