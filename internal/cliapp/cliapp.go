// Package cliapp is the urfave/cli set-up every simbench command shares:
// flag-parsing errors as usage errors, and race-free help for apps run in
// parallel (the tests run the CLI so): each command gets its own help
// sub-command and --help is applied from a copy.
package cliapp

import (
	"flag"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/internal/usage"
)

func init() {
	if f, ok := cli.HelpFlag.(*cli.BoolFlag); ok {
		cli.HelpFlag = &helpFlag{*f}
	}
	probe := &cli.App{}
	probe.Setup()
	helpAction = probe.Action // urfave/cli's help command's action
}

// helpAction is the action of urfave/cli's help command.
var helpAction cli.ActionFunc

// helpCommand is a command's own copy of urfave/cli's help sub-command:
// urfave/cli appends its one package-level help command to every command
// that has none and writes to it while setting the command up, a data race
// when apps run in parallel (the tests run the CLI so). HideHelp keeps it
// from getting a help command of its own.
func helpCommand() *cli.Command {
	return &cli.Command{Name: "help", Aliases: []string{"h"}, Usage: "Shows a list of commands or help for one command",
		ArgsUsage: "[command]", HideHelp: true, Action: helpAction}
}

// helpFlag is urfave/cli's --help flag applied from a copy: BoolFlag.Apply
// writes to the flag, and every app and command applies the one
// package-level cli.HelpFlag, a data race when apps run in parallel (the
// tests run the CLI so).
type helpFlag struct{ cli.BoolFlag }

// Apply registers a copy of the flag on set.
func (f *helpFlag) Apply(set *flag.FlagSet) error {
	c := f.BoolFlag
	return c.Apply(set)
}

// WithUsageErrors makes flag-parsing errors of every command usage errors.
// It also gives each command its own help sub-command (see helpCommand).
func WithUsageErrors(cmds []*cli.Command) []*cli.Command {
	for _, c := range cmds {
		c.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return usage.Wrap(err) }
		WithUsageErrors(c.Subcommands)
		if !c.HideHelp && !c.HideHelpCommand && c.Command("help") == nil {
			c.Subcommands = append(c.Subcommands, helpCommand())
		}
	}
	return cmds
}
