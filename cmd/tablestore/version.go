package main

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// version and revision name this build when the linker sets them, for
// builds whose build information lacks them (-buildvcs=false, a source
// tree without .git, or a build from a clone, whose module version is
// "(devel)"):
//
//	go install -ldflags "-X main.version=$(git describe --tags --always) -X main.revision=$(git rev-parse HEAD)" ./cmd/tablestore
var version, revision string

// versionText describes this build: the version (the linker's, else the
// module version from the build information the Go toolchain embeds:
// "(devel)" for a build from a work tree, a tag or pseudo-version for go
// install ...@version), the revision (the linker's, else the VCS revision
// and time with "+modified" for uncommitted changes), and the Go version.
func versionText() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = &debug.BuildInfo{}
	}
	return formatVersion(bi, version, revision)
}

// formatVersion is versionText from bi and the linker's values (""
// where not set).
func formatVersion(bi *debug.BuildInfo, linkedVersion, linkedRevision string) string {
	ver := linkedVersion
	if ver == "" {
		ver = bi.Main.Version
	}
	if ver == "" {
		ver = "(unknown version)"
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tablestore %s", ver)
	switch rev := settings["vcs.revision"]; {
	case linkedRevision != "":
		fmt.Fprintf(&b, ", revision %s", linkedRevision)
	case rev != "":
		fmt.Fprintf(&b, ", revision %s", rev)
		if t := settings["vcs.time"]; t != "" {
			fmt.Fprintf(&b, " (%s)", t)
		}
		if settings["vcs.modified"] == "true" {
			b.WriteString(" +modified")
		}
	default:
		b.WriteString(", revision unknown")
	}
	if bi.GoVersion != "" {
		fmt.Fprintf(&b, ", %s", bi.GoVersion)
	}
	return b.String()
}
