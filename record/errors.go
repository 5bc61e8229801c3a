package record

import (
	"errors"
	"fmt"
)

// ErrBroken marks a revision or configuration that cannot be measured
// because it does not build or its benchmark fails: a property of the
// revision, not of the host. An oracle's error wrapping it makes the
// searches skip the revision; an *InfraError stops them instead.
var ErrBroken = errors.New("broken revision")

// InfraError is the one infrastructure failure: a host could not run a
// command at all (the shell did not start, the directory is missing, the
// host is unreachable, a cluster job was preempted). The revision is not to
// blame: a job that meets one stops or retries instead of marking the
// revision broken, and the command line exits with status 2.
type InfraError struct {
	// Host is the host's name; empty when no host was involved.
	Host string
	// Op is what was being done ("start shell", "check out 3f2a9c1e00").
	Op  string
	Err error
}

func (e *InfraError) Error() string {
	if e.Host == "" {
		return fmt.Sprintf("%s: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("host %s: %s: %v", e.Host, e.Op, e.Err)
}

func (e *InfraError) Unwrap() error { return e.Err }

// IsInfra reports whether err is or wraps an *InfraError.
func IsInfra(err error) bool {
	var ie *InfraError
	return errors.As(err, &ie)
}
