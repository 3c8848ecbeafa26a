package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/simbench/simbench/internal/atomicfile"
	"github.com/simbench/simbench/internal/usage"
	"github.com/simbench/simbench/internal/warning"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/traces"
)

func traceCommand() *cli.Command {
	return &cli.Command{
		Name:  "trace",
		Usage: "inspect, filter and synthesise request traces (Mooncake JSONL, as AIPerf's mooncake_trace)",
		UsageText: "simbench trace info FILE [--format text|json]\n" +
			"simbench trace filter FILE -o OUT.jsonl [--start-offset-ms MS] [--end-offset-ms MS] [--speedup X] ...\n" +
			"simbench trace synth -o OUT.jsonl (--concurrency N | --request-rate R) [--request-count N] [--isl T] ...\n" +
			"simbench trace export RUN -o OUT.jsonl",
		Description:     help("trace"),
		HideHelpCommand: true,
		Subcommands:     []*cli.Command{traceInfoCommand(), traceFilterCommand(), traceSynthCommand(), traceExportCommand()},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usagef("unknown trace sub-command %q: want info, filter, synth or export", c.Args().First())
			}
			_ = cli.ShowSubcommandHelp(c)
			return usagef("trace needs a sub-command: info, filter, synth or export")
		},
	}
}

// ---- trace info ----

func traceInfoCommand() *cli.Command {
	return &cli.Command{
		Name:        "info",
		Usage:       "print request count, schedule span and rate, ISL/OSL statistics and prefix reuse of a trace",
		ArgsUsage:   "FILE",
		UsageText:   "simbench trace info FILE [--format text|json]",
		Description: help("trace_info"),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "format", Value: "text", Usage: "output format: text or json"},
		}, traceReadFlags()...),
		Action: traceInfoAction,
	}
}

func traceInfoAction(c *cli.Context) error {
	file, err := oneFileArg(c, "trace info")
	if err != nil {
		return err
	}
	format := c.String("format")
	if format != "text" && format != "json" {
		return usagef("--format must be text or json, got %q", format)
	}
	wl, err := loadTrace(c, file)
	if err != nil {
		return err
	}
	info := traces.Describe(wl)
	if format == "json" {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(info)
	}
	return info.WriteText(c.App.Writer)
}

// ---- trace filter ----

func traceFilterCommand() *cli.Command {
	return &cli.Command{
		Name:        "filter",
		Usage:       "cut a trace by time window, length or count, rescale it, and write it as Mooncake JSONL",
		ArgsUsage:   "FILE",
		UsageText:   "simbench trace filter FILE -o OUT.jsonl [flags]",
		Description: help("trace_filter"),
		Flags:       append(append([]cli.Flag{outputFlag()}, traceReadFlags()...), filterFlags("")...),
		Action:      traceFilterAction,
	}
}

func outputFlag() cli.Flag {
	return &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "`FILE` to write the Mooncake JSONL to, - for stdout (required)"}
}

func traceFilterAction(c *cli.Context) error {
	file, err := oneFileArg(c, "trace filter")
	if err != nil {
		return err
	}
	out, err := outputArg(c, "trace filter")
	if err != nil {
		return err
	}
	f := workloadSpec(c).Filter()
	if err := f.Validate(); err != nil {
		return usage.Wrap(err)
	}
	wl, err := loadTrace(c, file)
	if err != nil {
		return err
	}
	filtered, err := traces.Apply(wl, f)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if err := writeTrace(c, out, filtered); err != nil {
		return err
	}
	fmt.Fprintf(summaryWriter(c, out), "kept %d of %d requests; wrote %s (digest %s)\n",
		len(filtered.Requests), len(wl.Requests), outName(out), filtered.Digest)
	return nil
}

// ---- trace synth ----

func traceSynthCommand() *cli.Command {
	return &cli.Command{
		Name:        "synth",
		Usage:       "generate a seeded synthetic workload (closed loop or Poisson/gamma/constant arrivals; --agentic: agent sessions) as Mooncake JSONL",
		UsageText:   "simbench trace synth -o OUT.jsonl (--concurrency N | --request-rate R [--arrival-pattern poisson]) [flags]",
		Description: help("trace_synth"),
		Flags:       append(synthFlags(), agenticFlags()...),
		Action:      traceSynthAction,
	}
}

func synthFlags() []cli.Flag {
	return []cli.Flag{
		outputFlag(),
		&cli.IntFlag{Name: "concurrency", DefaultText: "none", Usage: "closed loop: requests in flight; with --request-rate: a cap"},
		&cli.IntFlag{Name: "request-count", Aliases: []string{"num-requests"}, Value: traces.DefaultSynth.RequestCount, Usage: "measured requests (warmup not included)"},
		&cli.IntFlag{Name: "warmup-request-count", Usage: "warmup requests sent first (marked \"warmup\": true)"},
		&cli.Float64Flag{Name: "request-rate", DefaultText: "none", Usage: "open loop: mean requests per second (session starts with --turns > 1)"},
		&cli.StringFlag{Name: "arrival-pattern", Usage: "constant, poisson or gamma (default poisson; needs --request-rate)"},
		&cli.Float64Flag{Name: "gamma-shape", Aliases: []string{"arrival-smoothness"}, Value: traces.DefaultSynth.GammaShape, Usage: "shape k of gamma inter-arrivals (1 = poisson, < 1 burstier, > 1 smoother)"},
		&cli.IntFlag{Name: "isl", Aliases: []string{"synthetic-input-tokens-mean"}, Value: traces.DefaultSynth.ISL, Usage: "mean input length (tokens)"},
		&cli.IntFlag{Name: "isl-stddev", Aliases: []string{"synthetic-input-tokens-stddev"}, Usage: "input length standard deviation"},
		&cli.IntFlag{Name: "osl", Aliases: []string{"output-tokens-mean"}, Value: traces.DefaultSynth.OSL, Usage: "mean output length (tokens)"},
		&cli.IntFlag{Name: "osl-stddev", Aliases: []string{"output-tokens-stddev"}, Usage: "output length standard deviation"},
		&cli.IntFlag{Name: "shared-prefix-tokens", Usage: "tokens every request's prompt starts with (a multiple of --hash-block-size)"},
		&cli.IntFlag{Name: "num-prefix-groups", Aliases: []string{"num-prefix-prompts"}, Value: traces.DefaultSynth.NumPrefixGroups,
			Usage: "number of distinct shared prefixes, assigned round-robin (AIPerf draws them at random)"},
		&cli.IntFlag{Name: "prefix-prompt-length", DefaultText: "off", Usage: "AIPerf's prefix: this many shared tokens (a multiple " +
			"of --hash-block-size) before the --isl tokens of each session's first turn; --shared-prefix-tokens counts its prefix within --isl"},
		&cli.IntFlag{Name: "hash-block-size", Aliases: []string{"isl-block-size"}, Value: traces.DefaultSynth.BlockSize, Usage: "tokens per hash_ids block"},
		&cli.Int64Flag{Name: "random-seed", Aliases: []string{"seed"}, Usage: "random seed"},
		&cli.IntFlag{Name: "turns", Aliases: []string{"session-turns-mean", "conversation-turn-mean"}, Value: traces.DefaultSynth.Turns,
			Usage: "turns per session; later turns extend the previous prompt (AIPerf's mean with stddev 0)"},
		&cli.Float64Flag{Name: "turn-delay-ms", Aliases: []string{"session-turn-delay-mean", "conversation-turn-delay-mean"},
			Usage: "delay between a turn's completion and the next turn (ms; AIPerf's mean with stddev 0)"},
	}
}

func traceSynthAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("trace synth takes no arguments, got %q", c.Args().First())
	}
	out, err := outputArg(c, "trace synth")
	if err != nil {
		return err
	}
	if c.Bool("agentic") {
		return traceSynthAgentic(c, out)
	}
	if n := agenticOnly(c); n != "" {
		return usagef("--%s needs --agentic", n)
	}
	spec, err := workloadSpec(c).Synth()
	if err != nil {
		return err
	}
	wl, err := traces.Synthesize(spec)
	if err != nil {
		return usage.Wrap(err)
	}
	if err := writeTrace(c, out, wl); err != nil {
		return err
	}
	warnSynth(c, out, wl, spec)
	fmt.Fprintf(summaryWriter(c, out), "wrote %d requests (%d warmup) to %s (digest %s)\n",
		len(wl.Requests), spec.WarmupCount, outName(out), wl.Digest)
	return nil
}

func warnSynth(c *cli.Context, out string, wl *traces.Workload, s traces.SynthSpec) {
	if s.Mode == traces.ModeConcurrency {
		fmt.Fprintf(c.App.ErrWriter, "warning: %s has no timestamps and the JSONL format cannot record --concurrency %d; "+
			"replay it with --concurrency %d\n", outName(out), wl.Concurrency, wl.Concurrency)
	}
	if s.WarmupCount > 0 {
		fmt.Fprintf(c.App.ErrWriter, "warning: the %d warmup requests are marked \"warmup\": true, a simbench extension "+
			"that AIPerf ignores (it would measure them)\n", s.WarmupCount)
	}
}

// ---- shared helpers ----

// oneFileArg returns the single FILE argument.
func oneFileArg(c *cli.Context, cmd string) (string, error) {
	switch c.NArg() {
	case 0:
		return "", usagef("%s needs a trace FILE", cmd)
	case 1:
		return c.Args().First(), nil
	}
	return "", usagef("%s takes one trace FILE, got %d arguments", cmd, c.NArg())
}

func outputArg(c *cli.Context, cmd string) (string, error) {
	out := c.String("output")
	if out == "" {
		return "", usagef("%s needs -o OUT.jsonl (or -o - for stdout)", cmd)
	}
	return out, nil
}

// traceFormatFlag is --trace-format, shared with the workload flags.
func traceFormatFlag() cli.Flag {
	return &cli.StringFlag{Name: "trace-format", Value: traces.FormatMooncake, Usage: fmt.Sprintf(
		"how to read the trace: %v (agentic_mooncake: DynoSim's rows with request_id, wait_for and tool_wait_ms; dag_jsonl: AIPerf's conversations with forks, spawns and delay in ms)", traces.TraceFormats)}
}

// traceReadFlags say how trace info and trace filter read FILE.
func traceReadFlags() []cli.Flag {
	return []cli.Flag{traceFormatFlag(),
		&cli.IntFlag{Name: "hash-block-size", Value: traces.MooncakeBlockSize, Usage: "tokens per hash_ids block of the trace"}}
}

// loadTrace loads file as --trace-format and --hash-block-size say and
// prints its warnings to stderr.
func loadTrace(c *cli.Context, file string) (*traces.Workload, error) {
	wl, warns, err := traces.LoadTrace(file, c.String("trace-format"), c.Int("hash-block-size"))
	if err != nil {
		return nil, err
	}
	warning.Print(c.App.ErrWriter, warning.Of(warns))
	return wl, nil
}

// writeTrace writes wl to out ("-" = the app's stdout).
// writeTrace writes wl to out (- for stdout) whole or not at all.
func writeTrace(c *cli.Context, out string, wl *traces.Workload) error {
	if out == "-" {
		return traces.WriteJSONL(c.App.Writer, wl)
	}
	err := atomicfile.WriteFile(out, func(w io.Writer) error { return traces.WriteJSONL(w, wl) })
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("write trace: %s: %w", out, pe.Err) // not the temporary file's name
	}
	return err
}

// outName names the output in messages.
func outName(out string) string {
	if out == "-" {
		return "stdout"
	}
	return out
}

// summaryWriter is stdout, or stderr when the trace itself goes to stdout.
func summaryWriter(c *cli.Context, out string) io.Writer {
	if out == "-" {
		return c.App.ErrWriter
	}
	return c.App.Writer
}
