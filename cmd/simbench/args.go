package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// permuteArgs moves flags that follow positional arguments in front of them,
// so `simbench summarize FILE -o DIR` works: urfave/cli v2 stops parsing
// flags at the first positional argument. "--" ends flag handling. Renamed
// flags are rewritten on the way (see renameDeprecated).
func permuteArgs(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	cmds := app.Commands
	i := 1
	// Walk the command path (e.g. "trace info").
	for i < len(args) {
		cmd := findCommand(cmds, args[i])
		if cmd == nil {
			break
		}
		out = append(out, args[i])
		i++
		if !hasSubcommands(cmd) {
			rest := renameDeprecated(strings.Join(append([]string{"simbench"}, out[1:]...), " "), cmd.Flags, args[i:], app.ErrWriter)
			return append(out, reorder(cmd.Flags, rest)...)
		}
		cmds = cmd.Subcommands
	}
	return append(out, args[i:]...)
}

// hasSubcommands reports whether cmd has sub-commands besides help.
func hasSubcommands(cmd *cli.Command) bool {
	for _, c := range cmd.Subcommands {
		if c.Name != "help" {
			return true
		}
	}
	return false
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

func reorder(flags []cli.Flag, rest []string) []string {
	var fl, pos []string
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			pos = append(pos, rest[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		fl = append(fl, a)
		if takesValue(flags, a) && i+1 < len(rest) {
			i++
			fl = append(fl, rest[i])
		}
	}
	if len(pos) == 0 {
		return fl
	}
	return append(append(fl, "--"), pos...)
}

// takesValue reports whether flag token a needs the next token as its value.
func takesValue(flags []cli.Flag, a string) bool {
	if strings.Contains(a, "=") {
		return false
	}
	name := strings.TrimLeft(a, "-")
	for _, f := range flags {
		for _, n := range f.Names() {
			if n != name {
				continue
			}
			if _, isBool := f.(*cli.BoolFlag); isBool {
				return false
			}
			return name != "help" && name != "h"
		}
	}
	return false
}
