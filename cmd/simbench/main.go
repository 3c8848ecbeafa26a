// Command simbench runs one request trace against a real OpenAI-compatible
// frontend and against an embedded LLM-serving simulator, and compares the two
// in AIPerf's terms.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/internal/usage"
	"github.com/simbench/simbench/realrun"
	"github.com/simbench/simbench/traces"
)

// Exit codes shared by every command.
const (
	exitOK        = 0
	exitFailure   = 1
	exitUsage     = 2
	exitThreshold = 3 // compare/validate: a --fail-above bound was breached
)

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// run builds the app and runs it; it returns the process exit code so tests
// can drive the whole CLI without exiting.
func run(args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	return exitCode(app.Run(permuteArgs(app, args)), stderr)
}

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

func newApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:  "simbench",
		Usage: "replay one LLM request trace on real serving stacks and on a simulator, and compare them in AIPerf's terms",
		Description: "simbench writes AIPerf-compatible files (profile_export_aiperf.json/.csv, profile_export.jsonl)\n" +
			"for real runs (simbench run) and simulated runs (simbench sim), and lines them up field for field\n" +
			"(simbench compare). Exit codes: 0 ok, 1 failure, 2 usage error, 3 threshold breached.",
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		Commands:        withUsageErrors(commands()),
		ExitErrHandler:  func(*cli.Context, error) {},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usage.Wrap(err)
		},
	}
}

// withUsageErrors makes flag-parsing errors of every command usage errors.
// It also gives each command its own help sub-command (see helpCommand).
func withUsageErrors(cmds []*cli.Command) []*cli.Command {
	for _, c := range cmds {
		c.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return usage.Wrap(err) }
		withUsageErrors(c.Subcommands)
		if !c.HideHelp && !c.HideHelpCommand && c.Command("help") == nil {
			c.Subcommands = append(c.Subcommands, helpCommand())
		}
	}
	return cmds
}

// usagef returns a usage error (exit code 2).
func usagef(format string, args ...any) error { return usage.Errorf(format, args...) }

// thresholdError reports a breached threshold (exit code 3).
type thresholdError struct{ msg string }

func (t thresholdError) Error() string { return t.msg }

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var th thresholdError
	if errors.As(err, &th) {
		fmt.Fprintln(stderr, "simbench:", err)
		return exitThreshold
	}
	fmt.Fprintln(stderr, "simbench:", err)
	var se *traces.SpecError
	if usage.Is(err) || errors.As(err, &se) || strings.HasPrefix(err.Error(), "Required flag") {
		return exitUsage
	}
	if errors.Is(err, realrun.ErrInterrupted) {
		return exitInterrupted
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return exitFailure
}
