package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/simbench/simbench/traces"
	"github.com/urfave/cli/v2"
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
		&cli.Float64Flag{Name: "speedup", DefaultText: "off", Usage: prefix + "divide timestamps and delays by this factor (2 = twice the rate)"},
		&cli.IntFlag{Name: "limit", DefaultText: "off", Usage: prefix + "keep at most the first N requests, in whole sessions"},
		&cli.IntFlag{Name: "max-total-tokens", DefaultText: "off", Usage: prefix + "drop sessions with a request whose ISL+OSL exceeds this"},
		&cli.IntFlag{Name: "max-isl", DefaultText: "off", Usage: prefix + "cap input lengths at this many tokens"},
		&cli.IntFlag{Name: "max-osl", DefaultText: "off", Usage: prefix + "cap output lengths at this many tokens"},
		&cli.Float64Flag{Name: "scale-lengths", DefaultText: "off", Usage: prefix + "multiply input and output lengths by this factor"},
	}
}

var (
	filterOnly = []string{"start-offset-ms", "end-offset-ms", "auto-offset", "speedup", "limit",
		"max-total-tokens", "max-isl", "max-osl", "scale-lengths"}
	synthOnly = []string{"request-count", "warmup-request-count", "request-rate", "arrival-pattern", "gamma-shape",
		"isl", "isl-stddev", "osl", "osl-stddev", "shared-prefix-tokens", "num-prefix-groups", "turns", "turn-delay-ms"}
)

// workloadFromFlags builds the workload the flags describe. Flag mistakes
// are usage errors (exit 2). When the command also has a
// --benchmark-duration flag and a rate is given without --request-count,
// enough requests are synthesised to fill the duration.
func workloadFromFlags(c *cli.Context) (*traces.Workload, error) {
	if c.IsSet("trace") {
		return traceWorkload(c)
	}
	if name := firstSet(c, filterOnly); name != "" {
		return nil, usagef("--%s reshapes a trace: it needs --trace", name)
	}
	spec, err := synthSpec(c)
	if err != nil {
		return nil, err
	}
	if d := c.Float64("benchmark-duration"); d > 0 && spec.Rate > 0 && !c.IsSet("request-count") {
		spec.RequestCount = int(math.Ceil(spec.Rate * d))
	}
	wl, err := traces.Synthesize(spec)
	if err != nil {
		return nil, usageError{err}
	}
	return wl, nil
}

func traceWorkload(c *cli.Context) (*traces.Workload, error) {
	if name := firstSet(c, synthOnly); name != "" {
		return nil, usagef("--%s shapes a synthetic workload: it cannot be used with --trace", name)
	}
	f := workloadFilter(c)
	if err := f.Validate(); err != nil {
		return nil, usageError{err}
	}
	file := c.String("trace")
	wl, err := loadTrace(c, file)
	if err != nil {
		return nil, err
	}
	if wl, err = traces.Apply(wl, f); err != nil {
		return nil, usagef("%s: %v", file, err)
	}
	if c.IsSet("concurrency") {
		if c.Int("concurrency") < 0 {
			return nil, usagef("--concurrency must be >= 0 (0 = no cap), got %d", c.Int("concurrency"))
		}
		wl.Concurrency = c.Int("concurrency")
	}
	if c.IsSet("block-size") {
		wl.BlockSize = c.Int("block-size")
	}
	return wl, nil
}

// workloadFilter is the traces.Filter of the --trace flags.
func workloadFilter(c *cli.Context) traces.Filter {
	return traces.Filter{
		MaxTotalTokens: c.Int("max-total-tokens"),
		StartMs:        c.Float64("start-offset-ms"),
		EndMs:          c.Float64("end-offset-ms"),
		HasWindow:      c.IsSet("start-offset-ms") || c.IsSet("end-offset-ms"),
		Speedup:        c.Float64("speedup"),
		Limit:          c.Int("limit"),
		MaxISL:         c.Int("max-isl"),
		MaxOSL:         c.Int("max-osl"),
		ScaleLengths:   c.Float64("scale-lengths"),
		RebaseTime:     c.Bool("auto-offset"),
	}
}

func firstSet(c *cli.Context, names []string) string {
	for _, n := range names {
		if c.IsSet(n) {
			return n
		}
	}
	return ""
}

// writeWorkloadFile keeps the exact workload a run replayed in its
// directory (traces.WorkloadFile, Mooncake JSONL with warmup marked), so
// calibrate, merge and later replays rebuild it without the flags.
func writeWorkloadFile(dir string, wl *traces.Workload) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, traces.WorkloadFile))
	if err != nil {
		return err
	}
	if err := traces.WriteJSONL(f, wl); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", f.Name(), err)
	}
	return f.Close()
}
