package main

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVersionOf(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, tc := range []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{"go install of a release", debug.BuildInfo{Main: debug.Module{Version: "v0.3.1"}}, "v0.3.1"},
		{"a build in a clean checkout", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"},
			Settings: vcs("4b97690c1d2e3f4a5b6c", "false")}, "devel-4b97690c1d2e (1.26.0)"},
		{"a build with local changes", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"},
			Settings: vcs("4b97690c1d2e3f4a5b6c", "true")}, "devel-4b97690c1d2e+dirty (1.26.0)"},
		{"no VCS information", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, versionOf(&tc.info))
		})
	}
}
