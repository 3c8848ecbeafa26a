package main

import (
	"embed"
	"strings"
)

// helpFiles hold the long descriptions of the commands (help/NAME.txt,
// NAME the command's path joined by "_"), prose kept as prose.
//
//go:embed help/*.txt
var helpFiles embed.FS

// help is the description of the command named name.
func help(name string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic("simbench: no help/" + name + ".txt") // a build mistake: the tests run every command's help
	}
	return strings.TrimSuffix(string(b), "\n")
}
