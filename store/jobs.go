package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/perfbot/perfbot/record"
)

// Job is one run of a task of the service (a bisection, a hunk search, an
// environment search), persisted so that a killed process resumes where it
// stopped and a finished one is not run again. Params, State and Result
// belong to the task; the store keeps them as they are. Its progress lines
// are its trace (AppendTrace).
type Job struct {
	ID     string          `json:"id"`
	Kind   record.JobKind  `json:"kind"`
	Params json.RawMessage `json:"params,omitempty"`
	State  json.RawMessage `json:"state,omitempty"`
	// Result is the report a finished job concluded with; a job run again
	// after it finished returns it instead of measuring.
	Result json.RawMessage `json:"result,omitempty"`
	Status record.JobState `json:"status"`
	// Attempts counts the failed tries of a job the queue ran again;
	// Error is the last failure.
	Attempts int    `json:"attempts,omitempty"`
	Error    string `json:"error,omitempty"`
	// ErrorKind says whose the last failure was: "input" (the request's)
	// or "infra" (the machines'); empty for anything else. A client that
	// follows the job exits as the command run by hand would.
	ErrorKind string `json:"error_kind,omitempty"`
	// Parent is the job that ran this one as a step (an alert's
	// bisection); the queue runs only jobs without one.
	Parent  string    `json:"parent,omitempty"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// Cost is what the job has measured so far, over every attempt: a
	// job resumed after an interruption reports the whole job's cost.
	Cost record.Cost `json:"cost,omitzero"`
}

// PutJob records j, replacing the job with the same id.
func (db *DB) PutJob(j Job) error {
	return db.bolt.Update(func(tx *bolt.Tx) error { return putJob(tx, j) })
}

// Job returns the job with the id, and false if there is none.
func (db *DB) Job(id string) (j Job, ok bool, err error) {
	err = db.view(func(tx *bolt.Tx) error {
		j, ok, err = getJob(tx, id)
		return err
	})
	return j, ok, err
}

// Jobs returns every job, newest (by creation) first.
func (db *DB) Jobs() (jobs []Job, err error) {
	err = db.view(func(tx *bolt.Tx) error {
		jobs, err = listJobs(tx)
		return err
	})
	return jobs, err
}

func validateJob(j Job) error {
	if j.ID == "" {
		return errors.New("job has no id")
	}
	if !j.Kind.Valid() {
		return fmt.Errorf("job %s: unknown kind %q (want bisect, hunks, envbisect, measure, nightly, alert, revert or file)", j.ID, j.Kind)
	}
	if !j.Status.Valid() {
		return fmt.Errorf("job %s: unknown status %q (want queued, running, done or failed)", j.ID, j.Status)
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
	}{{"params", j.Params}, {"state", j.State}, {"result", j.Result}} {
		if len(f.raw) > 0 && !json.Valid(f.raw) {
			return fmt.Errorf("job %s: %s: not valid JSON", j.ID, f.name)
		}
	}
	return nil
}

func putJob(tx *bolt.Tx, j Job) error {
	if err := validateJob(j); err != nil {
		return fmt.Errorf("put job: %w", err)
	}
	if err := putJSON(tx.Bucket(bucketJobs), []byte(j.ID), j); err != nil {
		return fmt.Errorf("put job %s: %w", j.ID, err)
	}
	return nil
}

func getJob(tx *bolt.Tx, id string) (Job, bool, error) {
	var j Job
	if id == "" {
		return j, false, errors.New("get job: empty id")
	}
	ok, err := getJSON(tx.Bucket(bucketJobs), []byte(id), &j)
	if err != nil {
		return j, false, fmt.Errorf("get job %s: %w", id, err)
	}
	return j, ok, nil
}

func listJobs(tx *bolt.Tx) ([]Job, error) {
	var jobs []Job
	err := tx.Bucket(bucketJobs).ForEach(func(k, v []byte) error {
		var j Job
		if err := decodeJSON(k, v, &j); err != nil {
			return fmt.Errorf("list jobs: decode %s: %w", k, err)
		}
		jobs = append(jobs, j)
		return nil
	})
	sort.SliceStable(jobs, func(a, b int) bool {
		if !jobs[a].Created.Equal(jobs[b].Created) {
			return jobs[a].Created.After(jobs[b].Created)
		}
		return jobs[a].ID < jobs[b].ID
	})
	return jobs, err
}
