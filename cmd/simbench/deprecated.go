package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// renamedFlag is a flag name given up so that one name means one thing
// across commands: a command that has the new name and not the old one
// still takes the old one, rewritten to the new with a note on stderr, and
// hides it from its help.
type renamedFlag struct {
	old, new string
	why      string
}

var renamedFlags = []renamedFlag{
	{"model", "model-preset", "--model names the served model in run and calibrate"},
	{"block-size", "hash-block-size", "it is the hash_ids block, not sim's --kv-block-size"},
	{"host-noise", "fit-noise", "the noise layer holds the client's noise too, not only the host's"},
	{"sweep", "grid", "a grid of configurations is not a load sweep (--sweep-concurrency, --sweep-rate)"},
}

// renameDeprecated rewrites the renamed flags among args, the flags and
// arguments of the command at path whose flags are flags, writing one note
// per renamed flag used to errw. "--" ends the flags.
func renameDeprecated(path string, flags []cli.Flag, args []string, errw io.Writer) []string {
	out := make([]string, 0, len(args))
	noted := map[string]bool{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if r, ok := renamed(flags, a); ok {
			name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			a = "--" + r.new
			if hasValue {
				a += "=" + value
			}
			if !noted[name] {
				noted[name] = true
				fmt.Fprintf(errw, "note: %s --%s is deprecated: use --%s (%s)\n", path, r.old, r.new, r.why)
			}
		}
		out = append(out, a)
		if strings.HasPrefix(a, "-") && takesValue(flags, a) && i+1 < len(args) {
			i++
			out = append(out, args[i])
		}
	}
	return out
}

// renamed returns the rename of flag token a when the command (flags) has
// the new name and not the old.
func renamed(flags []cli.Flag, a string) (renamedFlag, bool) {
	if !strings.HasPrefix(a, "-") || a == "-" {
		return renamedFlag{}, false
	}
	name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
	for _, r := range renamedFlags {
		if r.old == name && flagsHave(flags, r.new) && !flagsHave(flags, r.old) {
			return r, true
		}
	}
	return renamedFlag{}, false
}

// currentName is the flag name that replaced name, or name.
func currentName(name string) string {
	for _, r := range renamedFlags {
		if r.old == name {
			return r.new
		}
	}
	return name
}

// flagsHave reports whether one of flags has the name name.
func flagsHave(flags []cli.Flag, name string) bool {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}
