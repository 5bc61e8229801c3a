package record

// JobKind names a job of the service's task table.
type JobKind string

// The kinds of job.
const (
	JobBisect    JobKind = "bisect"
	JobHunks     JobKind = "hunks"
	JobEnvBisect JobKind = "envbisect"
	// JobMeasure measures revisions, as `perfbot measure` does.
	JobMeasure JobKind = "measure"
	// JobNightly is one scheduled cycle; JobAlert acts on one alert of a
	// cycle (bisect, hunks, file).
	JobNightly JobKind = "nightly"
	JobAlert   JobKind = "alert"
	// JobRevert proves a finding's culprit by reverting it on a tip.
	JobRevert JobKind = "revert"
	// JobFile files a finding, or every unfiled one, as `perfbot report
	// --file-issue` and `--retry-unfiled` do: through the queue, so that
	// it never files beside an alert job.
	JobFile JobKind = "file"
)

// Valid reports whether k is one of the kinds above.
func (k JobKind) Valid() bool {
	switch k {
	case JobBisect, JobHunks, JobEnvBisect, JobMeasure, JobNightly, JobAlert, JobRevert, JobFile:
		return true
	}
	return false
}

// JobState is where a job stands.
type JobState string

// The states of a job.
const (
	// JobQueued waits in the queue for a worker.
	JobQueued  JobState = "queued"
	JobRunning JobState = "running"
	JobDone    JobState = "done"
	JobFailed  JobState = "failed"
)

// Valid reports whether s is one of the states above.
func (s JobState) Valid() bool {
	switch s {
	case JobQueued, JobRunning, JobDone, JobFailed:
		return true
	}
	return false
}
