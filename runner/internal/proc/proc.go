// Package proc holds what every kind of host needs to run a command's
// shell and account for it: the process group it runs in and how that
// group is killed, recorded and reaped; the capture that keeps the head
// and tail of its output; the environment it gets and the dump of the
// environment its benchmark saw; and the quoting of scripts for sh.
package proc

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"syscall"
	"time"
)

// GroupExitWait bounds how long a host waits for a killed process group to
// disappear. SIGKILLed processes go in milliseconds unless they sleep in
// the kernel (a GPU driver call); waiting lets the next run start with the
// GPU memory freed.
const GroupExitWait = 10 * time.Second

// OutputDrainWait bounds how long a host reads a command's output after
// its process group is gone, for a process that escaped the group and
// holds the pipe.
const OutputDrainWait = time.Second

// RunMark names the variable that marks the environment of every process
// a command starts, so that a later perfbot can tell the command's process
// group from another that took its number.
const RunMark = "PERFBOT_RUN"

// GroupFile, in a tree's scratch directory, names the process group of
// the command running there and its mark: what the next process to lock
// the tree kills when perfbot died before the command ended.
const GroupFile = "running"

// NewMark returns a fresh value for RunMark.
func NewMark() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// CheckDir returns why dir cannot be a command's working directory, or
// nil; an empty dir is the process's own.
func CheckDir(dir string) error {
	if dir == "" {
		return nil
	}
	fi, err := os.Stat(dir)
	if err == nil && !fi.IsDir() {
		err = fmt.Errorf("%s is not a directory", dir)
	}
	return err
}

// ExitCode is the exit status of a process: 128+n when signal n ended it.
func ExitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// WithEnvDump makes script write its exported environment to envFile
// when it exits (an EXIT trap), so that what the script exported itself
// (export NCCL_ALGO=Tree; ./bench) is recorded as what its benchmark saw.
// The environment is also written before the script runs, for a script
// that replaces its shell (exec ./bench, whose environment is then the
// shell's at the start unless the script exported more) or its trap, or
// that is killed. env -0 is tried first; /proc/self/environ of cat covers
// an env without -0.
func WithEnvDump(script, envFile string) string {
	if envFile == "" {
		return script
	}
	q := ShellQuote(envFile)
	// The dump holds the benchmark's whole environment, tokens included:
	// it is written for its owner only (umask 077, in a subshell so that
	// the script's own umask stays).
	dump := "( umask 077; env -0 > " + q + " || cat /proc/self/environ > " + q + " ) 2> /dev/null"
	return "trap " + ShellQuote(dump) + " EXIT\n" + dump + "\n" + script
}

// ShellQuote quotes s for sh.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// TakeEnvFile parses a NUL-separated environment dump and removes it: it
// holds the benchmark's secrets in clear, and what is recorded of it is
// redacted from the map.
func TakeEnvFile(path string) map[string]string {
	data, err := os.ReadFile(path)
	_ = os.Remove(path)
	if err != nil {
		return nil
	}
	return ParseEnvDump(data)
}

// PrivateDir creates dir and its missing parents, and makes dir readable
// by its owner only (0700), also when it existed: scratch directories
// hold environment dumps and captured output.
func PrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.Chmod(dir, 0o700)
}

// ParseEnvDump parses what env -0 writes; nil when data is empty.
func ParseEnvDump(data []byte) map[string]string {
	if len(data) == 0 {
		return nil
	}
	env := map[string]string{}
	for _, kv := range bytes.Split(data, []byte{0}) {
		if k, v, ok := strings.Cut(string(kv), "="); ok && k != "" {
			env[k] = v
		}
	}
	return env
}

// Withhold returns environ (KEY=VALUE entries) without the variables that
// a name or path.Match glob of patterns matches.
func Withhold(environ, patterns []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if !matchesAny(k, patterns) {
			out = append(out, kv)
		}
	}
	return out
}

func matchesAny(name string, patterns []string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// MergeEnv returns base (KEY=VALUE entries) with over applied, in a
// stable order.
func MergeEnv(base []string, over map[string]string) []string {
	if len(over) == 0 {
		return base
	}
	env := make([]string, 0, len(base)+len(over))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := over[k]; !ok {
			env = append(env, kv)
		}
	}
	keys := make([]string, 0, len(over))
	for k := range over {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+over[k])
	}
	return env
}

// FirstLine names a script in error messages.
func FirstLine(script string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(script), "\n")
	return Clip(line, 60)
}

// LastLine returns the last non-blank line of out, shortened.
func LastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return Clip(strings.ToValidUTF8(strings.TrimSpace(lines[len(lines)-1]), "\uFFFD"), 200)
}

// Clip shortens s to about n bytes for an error message.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
