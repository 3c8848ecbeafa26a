package cliapp

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/internal/suggest"
	"github.com/simbench/simbench/internal/usage"
)

// undefinedFlag starts the flag package's error for a flag a command does
// not have.
const undefinedFlag = "flag provided but not defined: -"

// FlagError is err, a flag-parsing error of the command at path (e.g.
// "simbench run") whose flags are flags, as a one-line usage error: an
// unknown flag is named with the nearest flag of the command, when one is
// close, and a pointer to the command's --help.
func FlagError(path string, flags []cli.Flag, err error) error {
	name, ok := strings.CutPrefix(err.Error(), undefinedFlag)
	if !ok {
		return usage.Wrap(err)
	}
	hint := ""
	if near := suggest.Close(name, visibleNames(flags)); near != "" {
		hint = fmt.Sprintf(" (did you mean %s?)", dashed(near))
	}
	return usage.Errorf("%sunknown flag %s%s; see '%s --help'", prefix(path), dashed(name), hint, path)
}

// prefix starts an error of the command at path: its name without the
// program's ("trace info: "), which starts every error already; "" for the
// program itself.
func prefix(path string) string {
	if cmd := command(path); cmd != "" {
		return cmd + ": "
	}
	return ""
}

// command is path without the program's name: "trace info".
func command(path string) string {
	_, cmd, _ := strings.Cut(path, " ")
	return cmd
}

// UnknownCommand is the usage error for name, which is none of cmds, the
// sub-commands of the command at path: the nearest when one is close, else
// the list.
func UnknownCommand(path, name string, cmds []*cli.Command) error {
	var names []string
	for _, c := range cmds {
		if !c.Hidden && c.Name != "help" {
			names = append(names, c.Name)
		}
	}
	if near := suggest.Close(name, names); near != "" {
		return usage.Errorf("%sunknown command %q (did you mean %q?); see '%s --help'", prefix(path), name, near, path)
	}
	return usage.Errorf("%sunknown command %q: want one of %s", prefix(path), name, strings.Join(names, ", "))
}

// visibleNames are the names of the flags shown in help, --help among them.
func visibleNames(flags []cli.Flag) []string {
	names := []string{"help"}
	for _, f := range flags {
		if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
			continue
		}
		names = append(names, f.Names()...)
	}
	return names
}

// dashed is a flag name as it is typed: -o, --output-dir.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// requireInAction moves the check of c's required flags from urfave/cli,
// which prints the whole help before the error, into c's action: one line
// naming what is missing and where the help is. The flags' usage says
// "(required)" instead.
func requireInAction(path string, c *cli.Command) {
	var req []cli.Flag
	for _, f := range c.Flags {
		if r, ok := f.(cli.RequiredFlag); ok && r.IsRequired() {
			unrequire(f)
			req = append(req, f)
		}
	}
	if len(req) == 0 || c.Action == nil {
		return
	}
	act := c.Action
	c.Action = func(ctx *cli.Context) error {
		var missing []string
		for _, f := range req {
			if !ctx.IsSet(f.Names()[0]) {
				missing = append(missing, flagNames(f))
			}
		}
		if len(missing) > 0 {
			return usage.Errorf("%s needs %s; see '%s --help'", command(path), strings.Join(missing, " and "), path)
		}
		return act(ctx)
	}
}

// flagNames is f as --name (-n).
func flagNames(f cli.Flag) string {
	names := f.Names()
	s := dashed(names[0])
	for _, a := range names[1:] {
		if len(a) == 1 {
			return s + " (" + dashed(a) + ")"
		}
	}
	return s
}

// unrequire makes f optional for urfave/cli and says in its usage that it
// is required. Only the flag types simbench marks required are handled: a
// new one is a build mistake the help tests catch.
func unrequire(f cli.Flag) {
	switch f := f.(type) {
	case *cli.StringFlag:
		f.Required, f.Usage = false, f.Usage+" (required)"
	case *cli.StringSliceFlag:
		f.Required, f.Usage = false, f.Usage+" (required)"
	default:
		panic(fmt.Sprintf("cliapp: required flag %s of type %T", f.Names()[0], f))
	}
}
