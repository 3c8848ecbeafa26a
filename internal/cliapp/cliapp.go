// Package cliapp is the urfave/cli set-up every simbench command shares:
// flag-parsing errors as usage errors, and race-free help for apps run in
// parallel (the tests run the CLI so): each command gets its own help
// sub-command and --help is applied from a copy.
package cliapp

import (
	"errors"
	"flag"
	"strconv"

	"github.com/urfave/cli/v2"
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

// WithUsageErrors makes flag-parsing errors of every command one-line usage
// errors (see FlagError), as is a missing required flag (see
// requireInAction), and its integer flags decimal (see decimal). It also
// gives each command its own help sub-command (see helpCommand). path is
// the command line up to cmds ("simbench").
func WithUsageErrors(path string, cmds []*cli.Command) []*cli.Command {
	for _, c := range cmds {
		cpath := path + " " + c.Name
		c.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return FlagError(cpath, c.Flags, err) }
		requireInAction(cpath, c)
		decimal(c.Flags)
		WithUsageErrors(cpath, c.Subcommands)
		if !c.HideHelp && !c.HideHelpCommand && c.Command("help") == nil {
			c.Subcommands = append(c.Subcommands, helpCommand())
		}
	}
	return cmds
}

// decimal makes every integer flag of flags parse its argument in base 10,
// as AIPerf and vLLM's benchmark read them. urfave/cli registers them with
// the standard library's flag.Int, whose base-0 parse takes "--seed 010" for
// octal 8 and refuses "--concurrency 08"; its Base field reaches only the
// environment, so the flags are wrapped, not configured.
func decimal(flags []cli.Flag) {
	for i, f := range flags {
		switch f := f.(type) {
		case *cli.IntFlag:
			f.Base, flags[i] = 10, &decimalInt{f}
		case *cli.Int64Flag:
			f.Base, flags[i] = 10, &decimalInt64{f}
		case *cli.Uint64Flag:
			f.Base, flags[i] = 10, &decimalUint64{f}
		}
	}
}

// decimalInt is an IntFlag registered with a base-10 value.
type decimalInt struct{ *cli.IntFlag }

// Apply reads the flag's environment as urfave/cli does, then registers a
// base-10 value under every name.
func (f *decimalInt) Apply(set *flag.FlagSet) error {
	return applyDecimal(set, f.IntFlag, func() flag.Value {
		return &decimalValue{n: int64(f.Value), bits: strconv.IntSize, asInt: true}
	})
}

// decimalInt64 is an Int64Flag registered with a base-10 value.
type decimalInt64 struct{ *cli.Int64Flag }

// Apply: see decimalInt.Apply.
func (f *decimalInt64) Apply(set *flag.FlagSet) error {
	return applyDecimal(set, f.Int64Flag, func() flag.Value { return &decimalValue{n: f.Value, bits: 64} })
}

// decimalUint64 is a Uint64Flag registered with a base-10 value.
type decimalUint64 struct{ *cli.Uint64Flag }

// Apply: see decimalInt.Apply.
func (f *decimalUint64) Apply(set *flag.FlagSet) error {
	return applyDecimal(set, f.Uint64Flag, func() flag.Value { return &decimalValue{u: f.Value, unsigned: true, bits: 64} })
}

// applyDecimal applies f to a scratch set, so that urfave/cli reads its
// environment into its Value, then registers value() under each of its names.
func applyDecimal(set *flag.FlagSet, f interface {
	cli.Flag
	GetUsage() string
}, value func() flag.Value) error {
	if err := f.Apply(flag.NewFlagSet(f.Names()[0], flag.ContinueOnError)); err != nil {
		return err
	}
	for _, name := range f.Names() {
		set.Var(value(), name, f.GetUsage())
	}
	return nil
}

// decimalValue is a flag.Getter holding an integer written in base 10. Its
// String is the canonical decimal, which urfave/cli's c.Int and c.Uint64
// parse back.
type decimalValue struct {
	n        int64
	u        uint64
	unsigned bool
	bits     int
	asInt    bool // Get returns an int (an IntFlag's value), not an int64
}

// Get is the value as its flag's type holds it (c.Value returns it).
func (v *decimalValue) Get() any {
	switch {
	case v.unsigned:
		return v.u
	case v.asInt:
		return int(v.n)
	}
	return v.n
}

func (v *decimalValue) Set(s string) error {
	var err error
	if v.unsigned {
		v.u, err = strconv.ParseUint(s, 10, v.bits)
	} else {
		v.n, err = strconv.ParseInt(s, 10, v.bits)
	}
	if errors.Is(err, strconv.ErrRange) {
		return errors.New("out of range")
	}
	if err != nil {
		return errors.New("not a decimal integer")
	}
	return nil
}

func (v *decimalValue) String() string {
	if v.unsigned {
		return strconv.FormatUint(v.u, 10)
	}
	return strconv.FormatInt(v.n, 10)
}
