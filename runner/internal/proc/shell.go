package proc

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// ShellLib defines the functions that scripts perfbot runs on other
// machines share (sh, on Linux). perfbot_live PGID [MARK] reports whether
// process group PGID has a member that is not a zombie (and, given MARK,
// whose environment holds PERFBOT_RUN=MARK: the group perfbot started, not
// another that took its number). perfbot_gone PGID N waits up to N tenths
// of a second for the group to be gone. perfbot_stop PGID N sends SIGTERM
// to the group, and SIGKILL to what is left of it after N tenths of a
// second. perfbot_kill_marked MARK SIGNAL sends SIGNAL to every process
// whose environment holds PERFBOT_RUN=MARK: those that left the group
// (setsid, a daemon) keep the mark they were started with. The script
// that calls it must not export the mark itself, or its own tools would
// be among them. One grep -z reads every environment: a loop of a
// process per /proc entry would take seconds on a busy host.
const ShellLib = `perfbot_live() {
	_g=$1 _m=${2:-}
	for _f in /proc/[0-9]*; do
		{ read -r _l < "$_f/stat"; } 2> /dev/null || continue
		_l=${_l##*) }
		set -- $_l
		[ "$3" = "$_g" ] && [ "$1" != Z ] && [ "$1" != X ] || continue
		[ -z "$_m" ] && return 0
		tr '\0' '\n' < "$_f/environ" 2> /dev/null | grep -qxF "PERFBOT_RUN=$_m" && return 0
	done
	return 1
}
perfbot_gone() {
	_i=0
	while perfbot_live "$1" && [ "$_i" -lt "$2" ]; do sleep 0.1; _i=$((_i + 1)); done
}
perfbot_stop() {
	kill -TERM -"$1" 2> /dev/null
	perfbot_gone "$1" "$2"
	kill -KILL -"$1" 2> /dev/null
}
perfbot_kill_marked() {
	for _f in $(grep -lzxF "PERFBOT_RUN=$1" /proc/[0-9]*/environ 2> /dev/null); do
		_f=${_f#/proc/}
		kill -"$2" "${_f%/environ}" 2> /dev/null
	done
	:
}
`

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Exports is sh code that sets and exports the variables of env, one a
// line, in a stable order. A name that cannot be a variable's is an error.
func Exports(env map[string]string) (string, error) {
	keys := make([]string, 0, len(env))
	for k := range env {
		if !envName.MatchString(k) {
			return "", fmt.Errorf("%q is not an environment variable name", k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s; export %s\n", k, ShellQuote(env[k]), k)
	}
	return b.String(), nil
}

// IsEnvName reports whether name can be an environment variable's in sh.
func IsEnvName(name string) bool { return envName.MatchString(name) }
