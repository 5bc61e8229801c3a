package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/perfbot/perfbot/bisect"
	"github.com/perfbot/perfbot/config"
	"github.com/perfbot/perfbot/gitops"
	"github.com/perfbot/perfbot/record"
	"github.com/perfbot/perfbot/service"
	"github.com/perfbot/perfbot/store"
)

func TestExitCode(t *testing.T) {
	infra := &record.InfraError{Host: "gpu1", Op: "start shell", Err: errors.New("connection reset")}
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"usage", usagef("unknown flag --bogus"), exitInput},
		{"input", &service.InputError{Err: errors.New(`resolve "nope": unknown revision`)}, exitInput},
		{"configuration", fmt.Errorf("load: %w", &config.Error{File: "perfbot.yaml", Line: 3, Key: "hosts[0].kind", Msg: "unknown"}), exitInput},
		{"ambiguous finding prefix", fmt.Errorf("finding 3f: %w", store.ErrAmbiguous), exitInput},
		{"store from a newer perfbot", fmt.Errorf("open store: %w", store.ErrNewerSchema), exitInput},
		{"unknown revision", fmt.Errorf("resolve: %w", gitops.ErrUnknownRevision), exitInput},
		{"an end that does not build", fmt.Errorf("bisect: end 3f2a: %w", bisect.ErrBroken), exitInput},
		{"infrastructure", infra, exitInfra},
		{"infrastructure deep down", fmt.Errorf("bisect: %w", fmt.Errorf("measure 3f2a: %w", infra)), exitInfra},
		{"infrastructure among others", errors.Join(errors.New("record run: disk full"), infra), exitInfra},
		{"store held by another process", fmt.Errorf("open: %w", store.ErrLocked), exitInfra},
		{"a deadline", fmt.Errorf("github: %w", context.DeadlineExceeded), exitInfra},
		{"interrupted", fmt.Errorf("bisect: measure 3f2a: %w", context.Canceled), exitInterrupted},
		{"interrupted while a host worked", &record.InfraError{Host: "local", Op: "check out 3f2a", Err: context.Canceled}, exitInterrupted},
		{"anything else is a bug", errors.New("assignment to entry in nil map"), exitBug},
		{"a wrapped surprise is a bug too", fmt.Errorf("record run of 3f2a: %w", errors.New("encode: unsupported value NaN")), exitBug},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, exitCode(tt.err))
		})
	}
}

func TestReportError(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
		code int
	}{
		{"a bug says so", errors.New("index out of range"), "perfbot: internal error (a bug; please report it): index out of range\n", exitBug},
		{"infrastructure is not a bug", &record.InfraError{Host: "gpu1", Op: "start shell", Err: errors.New("no such file")}, "perfbot: host gpu1: start shell: no such file\n", exitInfra},
		{"input is not a bug", &service.InputError{Err: errors.New("bad --since")}, "perfbot: bad --since\n", exitInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			assert.Equal(t, tt.code, reportError(&stderr, tt.err))
			assert.Equal(t, tt.want, stderr.String())
		})
	}
}
