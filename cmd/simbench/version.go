package main

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// versionLine is what --version prints: the module's version and the VCS
// revision the binary was built from, as the Go tool stamped them.
func versionLine() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "simbench (no build information)"
	}
	return formatVersion(info)
}

// formatVersion is versionLine for info: "simbench VERSION (revision R,
// TIME[, modified]) GO".
func formatVersion(info *debug.BuildInfo) string {
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	var vcs []string
	if r := settings["vcs.revision"]; r != "" {
		vcs = append(vcs, "revision "+r)
	}
	if t := settings["vcs.time"]; t != "" {
		vcs = append(vcs, t)
	}
	if settings["vcs.modified"] == "true" {
		vcs = append(vcs, "modified")
	}
	line := "simbench " + info.Main.Version
	if len(vcs) > 0 {
		line += " (" + strings.Join(vcs, ", ") + ")"
	}
	if info.GoVersion != "" {
		line += fmt.Sprintf(" %s", info.GoVersion)
	}
	return line
}
