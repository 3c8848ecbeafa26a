package main

import (
	"github.com/simbench/simbench/internal/warning"
	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/traces"
)

// The workload flags are shared by every command that replays a workload
// (simbench run, simbench sim) so both accept exactly the same names and
// build exactly the same traces.Workload from them: a Mooncake trace
// (--trace, reshaped by traces.Apply) or a synthetic workload
// (traces.Synthesize, the flags of `simbench trace synth`).

// workloadFlags returns the workload flags.
func workloadFlags() []cli.Flag {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "trace", Aliases: []string{"input-file"}, Usage: "Mooncake JSONL `FILE` replayed on its timestamps " +
			"(fixed schedule; --concurrency is then a cap); without it a synthetic workload is generated from the flags below"},
		traceFormatFlag(),
	}
	flags = append(flags, workloadFilterFlags()...)
	for _, f := range synthFlags() {
		if f.Names()[0] != "output" {
			flags = append(flags, f)
		}
	}
	return flags
}

// workloadFilterFlags reshape a --trace workload (traces.Filter).
func workloadFilterFlags() []cli.Flag { return filterFlags("--trace: ") }

// filterFlags are the traces.Filter flags, shared with `simbench trace
// filter`; prefix starts every usage line.
func filterFlags(prefix string) []cli.Flag {
	return []cli.Flag{
		&cli.Float64Flag{Name: "start-offset-ms", Aliases: []string{"fixed-schedule-start-offset"},
			DefaultText: "off", Usage: prefix + "drop sessions starting before this time (ms); it becomes time zero"},
		&cli.Float64Flag{Name: "end-offset-ms", Aliases: []string{"fixed-schedule-end-offset"},
			DefaultText: "off", Usage: prefix + "drop sessions starting after this time (ms)"},
		&cli.BoolFlag{Name: "auto-offset", Aliases: []string{"fixed-schedule-auto-offset"},
			Usage: prefix + "shift the schedule so the first request is at time zero"},
		&cli.Float64Flag{Name: "speedup", Aliases: []string{"replay-speedup"}, DefaultText: "off", Usage: prefix + "divide timestamps and delays by this factor (2 = twice the rate)"},
		&cli.IntFlag{Name: "limit", DefaultText: "off", Usage: prefix + "keep at most the first N requests, in whole sessions"},
		&cli.IntFlag{Name: "max-total-tokens", DefaultText: "off", Usage: prefix + "drop sessions with a request whose ISL+OSL exceeds this"},
		&cli.IntFlag{Name: "max-isl", DefaultText: "off", Usage: prefix + "cap input lengths at this many tokens"},
		&cli.IntFlag{Name: "max-osl", DefaultText: "off", Usage: prefix + "cap output lengths at this many tokens"},
		&cli.Float64Flag{Name: "scale-lengths", DefaultText: "off", Usage: prefix + "multiply input and output lengths by this factor"},
	}
}

// workloadSpec is the workload flags given, as a traces.Spec. A flag of
// another type than its key is a bug in workloadFlags, not a user's
// mistake: it panics.
func workloadSpec(c *cli.Context) traces.Spec {
	s, err := traces.SpecFromFlags(func(n string) bool { return c.IsSet(currentName(n)) },
		func(n string) any { return c.Value(currentName(n)) })
	if err != nil {
		panic(err)
	}
	return s
}

// workloadFromFlags builds the workload the flags describe (traces.Spec);
// the trace's warnings go to stderr. When the command also has a
// --benchmark-duration flag and a rate is given without --request-count,
// enough requests are synthesised to fill the duration.
func workloadFromFlags(c *cli.Context) (*traces.Workload, error) {
	wl, warns, err := workloadSpec(c).Build(c.Float64("benchmark-duration"))
	warning.Print(c.App.ErrWriter, warning.Of(warns))
	return wl, err
}

func firstSet(c *cli.Context, names []string) string {
	for _, n := range names {
		if c.IsSet(n) {
			return n
		}
	}
	return ""
}
