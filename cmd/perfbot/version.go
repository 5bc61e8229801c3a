package main

import (
	"runtime/debug"
	"strings"
)

// version is perfbot's version as the Go toolchain recorded it in the
// binary: the module version for `go install …@vX`, else the VCS revision
// the binary was built from (with "+dirty" for uncommitted changes), else
// "devel".
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return versionOf(info)
}

func versionOf(info *debug.BuildInfo) string {
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return "devel"
	}
	return "devel-" + rev[:min(len(rev), 12)] + dirty + " (" + strings.TrimPrefix(info.GoVersion, "go") + ")"
}
