package minimize

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// elemSet is a set of elements of a universe, held as their indices in
// ascending order. The order is the universe's (group by group), so a set
// converts to names in a stable, readable order, and equal sets have equal
// keys.
type elemSet []int

// key identifies the set as a configuration: two equal sets have equal keys.
func (s elemSet) key() string {
	var b strings.Builder
	for i, e := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(e))
	}
	return b.String()
}

func (s elemSet) contains(e int) bool {
	_, ok := slices.BinarySearch(s, e)
	return ok
}

// union returns s ∪ t.
func (s elemSet) union(t elemSet) elemSet {
	out := make(elemSet, 0, len(s)+len(t))
	i, j := 0, 0
	for i < len(s) || j < len(t) {
		switch {
		case j == len(t) || (i < len(s) && s[i] < t[j]):
			out = append(out, s[i])
			i++
		case i == len(s) || t[j] < s[i]:
			out = append(out, t[j])
			j++
		default:
			out = append(out, s[i])
			i++
			j++
		}
	}
	return out
}

// minus returns s ∖ t.
func (s elemSet) minus(t elemSet) elemSet {
	out := make(elemSet, 0, len(s))
	for _, e := range s {
		if !t.contains(e) {
			out = append(out, e)
		}
	}
	return out
}

// subsetOf reports whether every element of s is in t.
func (s elemSet) subsetOf(t elemSet) bool {
	for _, e := range s {
		if !t.contains(e) {
			return false
		}
	}
	return true
}

// setUniverse is the ordered set of elements a search works on, with the
// hierarchy (groups) and the dependency relation, all by index.
type setUniverse struct {
	names []string
	index map[string]int
	// group[e] is the index of the group element e belongs to.
	group []int
	// deps[e] are the elements e needs to apply or build.
	deps [][]int
}

// newSetUniverse validates the groups and dependencies and indexes them. The
// universe's order is the order of the groups and of the elements in them.
func newSetUniverse(groups []Group, deps map[string][]string) (*setUniverse, error) {
	u := &setUniverse{index: map[string]int{}}
	for g, grp := range groups {
		if len(grp.Elements) == 0 {
			return nil, fmt.Errorf("group %d (%q) has no elements", g, grp.Name)
		}
		for _, name := range grp.Elements {
			if name == "" {
				return nil, fmt.Errorf("group %d (%q) has an empty element id", g, grp.Name)
			}
			if _, dup := u.index[name]; dup {
				return nil, fmt.Errorf("element %q appears twice in the groups", name)
			}
			u.index[name] = len(u.names)
			u.names = append(u.names, name)
			u.group = append(u.group, g)
		}
	}
	if len(u.names) == 0 {
		return nil, fmt.Errorf("no elements to search: Options.Groups is empty")
	}
	u.deps = make([][]int, len(u.names))
	for name, needs := range deps {
		e, ok := u.index[name]
		if !ok {
			return nil, fmt.Errorf("dependency of unknown element %q", name)
		}
		for _, need := range needs {
			d, ok := u.index[need]
			if !ok {
				return nil, fmt.Errorf("element %q needs unknown element %q", name, need)
			}
			if d != e && !slices.Contains(u.deps[e], d) {
				u.deps[e] = append(u.deps[e], d)
			}
		}
	}
	return u, nil
}

// all is the full set: the bad end.
func (u *setUniverse) all() elemSet {
	s := make(elemSet, len(u.names))
	for i := range s {
		s[i] = i
	}
	return s
}

func (u *setUniverse) namesOf(s elemSet) []string {
	out := make([]string, len(s))
	for i, e := range s {
		out[i] = u.names[e]
	}
	return out
}

// closeUp adds to s, transitively, every element that an element of s
// needs: the smallest configuration containing s that can be built.
func (u *setUniverse) closeUp(s elemSet) elemSet {
	in := make([]bool, len(u.names))
	for _, e := range s {
		in[e] = true
	}
	stack := slices.Clone(s)
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, d := range u.deps[e] {
			if !in[d] {
				in[d] = true
				stack = append(stack, d)
			}
		}
	}
	return u.fromMask(in)
}

// closeDown removes from s, transitively, every element that needs an
// element missing from s: the largest configuration inside s that can be
// built. Reverting a hunk from the culprit also reverts the hunks that use
// it.
func (u *setUniverse) closeDown(s elemSet) elemSet {
	in := make([]bool, len(u.names))
	for _, e := range s {
		in[e] = true
	}
	for changed := true; changed; {
		changed = false
		for _, e := range s {
			if !in[e] {
				continue
			}
			for _, d := range u.deps[e] {
				if !in[d] {
					in[e] = false
					changed = true
					break
				}
			}
		}
	}
	return u.fromMask(in)
}

func (u *setUniverse) fromMask(in []bool) elemSet {
	var out elemSet
	for e, ok := range in {
		if ok {
			out = append(out, e)
		}
	}
	return out
}

// partition splits delta into at most n non-empty parts, hierarchy first:
// while delta spans at least n groups, parts are runs of whole groups (a
// file's hunks stay together, as HDD searches files before hunks), unless
// that leaves a part with less than three quarters of its fair share of
// elements; then, and below n groups, parts are runs of consecutive
// elements. Parts are balanced by element count so that a single culprit
// element halves the search at every step: whole files of very different
// sizes would cost tests for little narrowing.
func (u *setUniverse) partition(delta elemSet, n int) []elemSet {
	n = min(n, len(delta))
	// units are the groups present in delta, each as a run of elements.
	var units []elemSet
	for i, e := range delta {
		if i == 0 || u.group[e] != u.group[delta[i-1]] {
			units = append(units, nil)
		}
		units[len(units)-1] = append(units[len(units)-1], e)
	}
	if len(units) >= n {
		parts := balanceParts(units, n, len(delta))
		smallest := len(delta)
		for _, p := range parts {
			smallest = min(smallest, len(p))
		}
		if 4*smallest*n >= 3*len(delta) {
			return parts
		}
	}
	singles := make([]elemSet, len(delta))
	for i, e := range delta {
		singles[i] = elemSet{e}
	}
	return balanceParts(singles, n, len(delta))
}

// balanceParts joins consecutive units into n parts, cutting where the running
// element count is closest to k·total/n, and never leaving a part empty.
func balanceParts(units []elemSet, n, total int) []elemSet {
	parts := make([]elemSet, 0, n)
	next, seen := 0, 0
	for k := 1; k <= n; k++ {
		var part elemSet
		target := float64(k*total) / float64(n)
		// Keep at least one unit for each later part.
		limit := len(units) - (n - k)
		for next < limit {
			if len(part) > 0 && k < n {
				with := float64(seen + len(units[next]))
				if with-target > target-float64(seen) {
					break
				}
			}
			part = append(part, units[next]...)
			seen += len(units[next])
			next++
		}
		parts = append(parts, part)
	}
	return parts
}
