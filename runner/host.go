package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/perfbot/perfbot/record"
)

// Host is a machine that runs build and benchmark commands.
type Host interface {
	// Name is the host's configured name, recorded with every run.
	Name() string
	// Exec runs cmd to completion, timeout or cancellation. A command that
	// fails, times out or prints garbage is a Result, not an error: the
	// error is only for a host that could not run the command at all, and
	// is then an *InfraError.
	Exec(ctx context.Context, cmd Command) (Result, error)
	// Facts describes the machine (no Env); hosts compute it once.
	Facts(ctx context.Context) (record.Fingerprint, error)
}

// Command is one shell script run on a host.
type Command struct {
	// Dir is the working directory; it must exist.
	Dir string
	// Script is run by sh -c.
	Script string
	// Env is added to the host's environment, replacing variables of the
	// same name.
	Env map[string]string
	// Timeout bounds the run; zero means only ctx bounds it.
	Timeout time.Duration
	// EnvFile, when set, names a file on the host where the environment
	// the script's process received is written (NUL-separated KEY=VALUE,
	// as env -0 writes it); the host also returns it in Result.Env.
	EnvFile string
}

// Result is what a command did.
type Result struct {
	// Output is stdout and stderr interleaved, capped: when the output
	// was longer, its head and tail are kept and Truncated is set.
	Output    []byte
	Truncated bool
	// ExitCode is the script's exit status; 128+n when signal n ended it,
	// and -1 when it timed out or was cancelled.
	ExitCode int
	TimedOut bool
	Duration time.Duration
	// Env is the environment the script's process received, read back
	// from Command.EnvFile; nil when EnvFile was empty or unreadable.
	Env map[string]string
}

// InfraError means a host could not run a command at all: the shell did
// not start, the directory is missing, the host is unreachable. The
// revision is not to blame, so the job stops and is retried rather than
// the revision being marked broken.
type InfraError struct {
	Host string
	// Op is what was being done ("start shell", "open working directory").
	Op  string
	Err error
}

func (e *InfraError) Error() string {
	return fmt.Sprintf("host %s: %s: %v", e.Host, e.Op, e.Err)
}

func (e *InfraError) Unwrap() error { return e.Err }
