//go:build tools

package perfbot

import (
	_ "github.com/bluekeyes/go-gitdiff/gitdiff"
	_ "github.com/bmatcuk/doublestar/v4"
	_ "github.com/go-git/go-git/v5"
	_ "github.com/google/go-github/v60/github"
	_ "github.com/robfig/cron/v3"
	_ "github.com/spf13/cobra"
	_ "github.com/stretchr/testify/require"
	_ "go.etcd.io/bbolt"
	_ "go.yaml.in/yaml/v3"
	_ "golang.org/x/crypto/ssh"
	_ "golang.org/x/perf/benchfmt"
	_ "golang.org/x/perf/benchmath"
)
