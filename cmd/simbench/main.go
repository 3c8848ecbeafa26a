// Command simbench runs one request trace against a real OpenAI-compatible
// frontend and against an embedded LLM-serving simulator, and compares the two
// in AIPerf's terms.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/internal/cliapp"
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
		// urfave/cli's version flag is one package-level flag: --version is
		// the app's own, without -v (AIPerf's --verbose).
		HideVersion:    true,
		Flags:          []cli.Flag{&cli.BoolFlag{Name: "version", Usage: "print the version and VCS revision"}},
		Commands:       cliapp.WithUsageErrors("simbench", commands()),
		Action:         appAction,
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return cliapp.FlagError("simbench", c.App.Flags, err)
		},
	}
}

// appAction runs when no command is named: --version, the help, or an
// unknown command (a usage error).
func appAction(c *cli.Context) error {
	switch {
	case c.Bool("version"):
		_, err := fmt.Fprintln(c.App.Writer, versionLine())
		return err
	case c.NArg() == 0 || c.NArg() == 1 && c.Args().First() == "help":
		return cli.ShowAppHelp(c)
	}
	name := c.Args().First()
	if name == "help" { // simbench help CMD
		name = c.Args().Get(1)
		if c.App.Command(name) != nil {
			return cli.ShowCommandHelp(c, name)
		}
	}
	return cliapp.UnknownCommand("simbench", name, c.App.Commands)
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
	if usage.Is(err) || errors.As(err, &se) {
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
