package minimize

import "sort"

// EnvDiff returns the names of the variables whose values differ between
// the good and the bad environment, sorted. A variable set on one side and
// unset on the other differs; set to the empty string is not unset.
//
// The names are the elements of an environment search: Isolate with one
// Group holding them, and an Oracle that measures the set S in the
// environment EnvConfiguration(good, bad, S).
func EnvDiff(good, bad map[string]string) []string {
	var names []string
	for name, g := range good {
		if b, ok := bad[name]; !ok || b != g {
			names = append(names, name)
		}
	}
	for name := range bad {
		if _, ok := good[name]; !ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// EnvConfiguration is the environment an environment search measures for
// the set: the good environment with every variable of the set taken from
// the bad one (set to the bad value, or unset where the bad side leaves it
// unset). The empty set is the good environment and the set EnvDiff(good,
// bad) is the bad one. The maps passed in are not modified.
func EnvConfiguration(good, bad map[string]string, set []string) map[string]string {
	env := make(map[string]string, len(good)+len(set))
	for name, v := range good {
		env[name] = v
	}
	for _, name := range set {
		if v, ok := bad[name]; ok {
			env[name] = v
		} else {
			delete(env, name)
		}
	}
	return env
}
