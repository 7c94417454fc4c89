package main

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// versionText describes this build from the build information the Go
// toolchain embeds: the module version ("(devel)" for a build from a
// work tree, a tag or pseudo-version for go install ...@version), the
// VCS revision and time with "+modified" for uncommitted changes, and the
// Go version.
func versionText() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "tablestore (no build information)"
	}
	return formatVersion(bi)
}

func formatVersion(bi *debug.BuildInfo) string {
	version := bi.Main.Version
	if version == "" {
		version = "(unknown version)"
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tablestore %s", version)
	if rev := settings["vcs.revision"]; rev != "" {
		fmt.Fprintf(&b, ", revision %s", rev)
		if t := settings["vcs.time"]; t != "" {
			fmt.Fprintf(&b, " (%s)", t)
		}
		if settings["vcs.modified"] == "true" {
			b.WriteString(" +modified")
		}
	} else {
		b.WriteString(", revision unknown")
	}
	fmt.Fprintf(&b, ", %s", bi.GoVersion)
	return b.String()
}
