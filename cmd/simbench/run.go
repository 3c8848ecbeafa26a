package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/simbench/simbench/internal/warning"
	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/internal/interrupt"
	"github.com/simbench/simbench/internal/progress"
	"github.com/simbench/simbench/internal/usage"
	"github.com/simbench/simbench/loadgen"
	"github.com/simbench/simbench/realrun"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// apiKeyEnv is read when --api-key is not given.
const apiKeyEnv = realrun.APIKeyEnv

// exitInterrupted is the exit code of a run stopped by SIGINT/SIGTERM
// (128 + SIGINT), after its files were written.
const exitInterrupted = interrupt.ExitCode

func runCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "send a trace (or a synthetic workload) to a real OpenAI-compatible server on its schedule and write AIPerf files",
		UsageText: "simbench run --url URL --model M (--trace FILE | --concurrency N | --request-rate R) -o DIR [flags]\n\n" +
			"   SIMBENCH_API_KEY=sk-... simbench run --url localhost:8000 --model Qwen/Qwen3-0.6B \\\n" +
			"       --trace conversation_trace.jsonl --limit 200 --extra-inputs ignore_eos:true -o artifacts/real\n" +
			"   simbench run --url localhost:11434 --model tiny --use-legacy-max-tokens \\\n" +
			"       --concurrency 4 --request-count 64 --isl 100 --osl 200 -o artifacts/ollama",
		Description: help("run") + "\n\n" + help("loadsweep"),
		Flags:       append(append(append(append(runFlags(), serverMetricsFlags()...), shardFlags()...), loadSweepFlags()...), workloadFlags()...),
		Action:      runAction,
	}
}

func runFlags() []cli.Flag {
	return append(append([]cli.Flag{
		&cli.StringFlag{Name: "output-dir", Aliases: []string{"o", "artifact-dir", "output-artifact-dir"}, Usage: "run directory to write the AIPerf files into", Required: true},
	}, endpointFlags(true)...),
		&cli.Float64Flag{Name: "benchmark-duration", DefaultText: "off", Usage: "stop sending after this many seconds"},
		&cli.Float64Flag{Name: "benchmark-grace-period", Value: 30, Usage: "after --benchmark-duration, seconds requests in flight may still finish"},
		&cli.StringFlag{Name: "max-error-rate", Aliases: []string{"failed-request-threshold"}, DefaultText: "off",
			Usage: "exit 1 when more than this share of requests failed (0.05 or 5%); the run still finishes (AIPerf aborts it)"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress output on stderr"},
		&cli.DurationFlag{Name: "progress-interval", Hidden: true, Usage: "progress period (default 250ms on a terminal, 10s otherwise)"},
		&cli.DurationFlag{Name: "spin", Hidden: true, Value: loadgen.DefaultSpin, Usage: "busy-wait before each deadline (negative: none)"},
	)
}

// endpointFlags are the server and request flags (run, calibrate --url).
func endpointFlags(required bool) []cli.Flag {
	headers := &repeated{}
	return []cli.Flag{
		&cli.StringFlag{Name: "url", Aliases: []string{"u"}, Usage: "server base URL; the scheme is optional (http:// assumed)", Required: required},
		&cli.StringFlag{Name: "model", Aliases: []string{"m", "model-names"}, Usage: "model name sent in every request", Required: required},
		&cli.StringFlag{Name: "endpoint-type", Value: loadgen.EndpointChat, Usage: "chat (/v1/chat/completions) or completions (/v1/completions)"},
		&cli.StringFlag{Name: "endpoint", Aliases: []string{"custom-endpoint"}, Usage: "request path instead of the endpoint type's default"},
		&cli.BoolFlag{Name: "streaming", Value: true, Usage: "stream the response (SSE); --streaming=false for whole responses (no TTFT/ITL)"},
		&cli.BoolFlag{Name: "use-legacy-max-tokens", Usage: "chat: send max_tokens instead of max_completion_tokens (needed by Ollama)"},
		&cli.StringSliceFlag{Name: "extra-inputs", Usage: "key:value merged into every request body; JSON-typed values (ignore_eos:true, min_tokens:200); repeatable"},
		&cli.GenericFlag{Name: "header", Value: headers, Usage: "\"Name:Value\" HTTP header sent on every request " +
			"(-H for short, as in AIPerf); repeatable; the value of one that looks like a credential is never written to any file or log"},
		&cli.GenericFlag{Name: "H", Value: headers, Hidden: true, Usage: "--header"}, // not an alias: urfave/cli would copy the values between them
		&cli.StringFlag{Name: "api-key", Usage: "sent as \"Authorization: Bearer KEY\" (default: $" + apiKeyEnv + "); never written to any file or log"},
		&cli.Float64Flag{Name: "request-timeout-seconds", Value: 600, Usage: "per-request timeout; a timed-out request is an error record"},
		&cli.BoolFlag{Name: "use-server-token-count", Usage: "take token counts from the server's usage (asks for stream_options.include_usage)"},
		&cli.BoolFlag{Name: "prompt-token-ids", Usage: "completions: send prompts as token-id arrays (exact ISL; vLLM and SGLang accept them)"},
		&cli.IntFlag{Name: "vocab-size", Value: 32000, Usage: "--prompt-token-ids: ids are drawn from [100, vocab-size)"},
		&cli.StringFlag{Name: "tokenizer", Usage: "a Hugging Face tokenizer.json, its directory, or a model's Hugging Face cache directory: " +
			"exact prompt lengths, output counted as AIPerf counts it"},
		&cli.BoolFlag{Name: "per-chunk-usage", Usage: "with --use-server-token-count: ask for usage on every chunk (continuous_usage_stats); chunk counts are its deltas"},
	}
}

func runAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("run takes no arguments, got %q", c.Args().First())
	}
	if swept, err := runLoadSweep(c); swept {
		return err
	}
	opts, wl, maxErr, err := runOptions(c)
	if err != nil {
		return err
	}
	ctx, stop := interrupt.Context(c.Context, c.App.ErrWriter, os.Exit)
	defer stop()
	var res *realrun.Result
	err = writeOutputDir(c, c.String("output-dir"), results.KeepPartial, func(dir string) (err error) {
		res, err = realrun.WriteRun(ctx, dir, wl, opts)
		return err
	})
	if err != nil {
		return err
	}
	res.Dir = c.String("output-dir")
	if err := res.WriteText(c.App.Writer); err != nil {
		return err
	}
	return res.Check(maxErr)
}

// runOptions reads the flags: the endpoint and limits, the workload (and
// the shard of it to send) and the server metrics to scrape.
func runOptions(c *cli.Context) (opts realrun.Options, wl *traces.Workload, maxErr float64, err error) {
	if opts.Config, maxErr, err = runConfig(c); err != nil {
		return opts, nil, 0, err
	}
	opts.Spec, opts.BenchmarkDuration = workloadSpec(c), c.Float64("benchmark-duration")
	opts.Log, opts.Quiet, opts.Warn = c.App.ErrWriter, c.Bool("quiet"), warning.To(c.App.ErrWriter)
	full, err := workloadFromFlags(c)
	if err != nil {
		return opts, nil, 0, err
	}
	if wl, opts.Shard, err = planShard(c, full); err != nil {
		return opts, nil, 0, err
	}
	if note := opts.Shard.Note(wl); note != "" && !opts.Quiet {
		fmt.Fprint(c.App.ErrWriter, note)
	}
	if opts.SLOs, err = goodputSLOs(c); err != nil {
		return opts, nil, 0, err
	}
	opts.ServerMetrics, err = serverMetricsFromFlags(c)
	return opts, wl, maxErr, err
}

// runConfig reads the endpoint and limit flags.
func runConfig(c *cli.Context) (loadgen.Config, float64, error) {
	ep, err := endpointFromFlags(c)
	if err != nil {
		return loadgen.Config{}, 0, err
	}
	maxErr, err := realrun.ParseErrorRate(c.String("max-error-rate"))
	if err != nil {
		return loadgen.Config{}, 0, err
	}
	dur, grace := c.Float64("benchmark-duration"), c.Float64("benchmark-grace-period")
	if !finiteNonNegative(dur) || !finiteNonNegative(grace) {
		return loadgen.Config{}, 0, usagef("--benchmark-duration and --benchmark-grace-period must be finite numbers >= 0")
	}
	cfg := loadgen.Config{Endpoint: ep, Limits: loadgen.Limits{Duration: realrun.Seconds(dur)}, Grace: realrun.Seconds(grace),
		Spin: c.Duration("spin")}
	if cfg.Spin == 0 {
		cfg.Spin = -1 // --spin 0: no spin (loadgen's 0 means the default)
	}
	if !c.Bool("quiet") {
		cfg.Progress, cfg.ProgressEvery = progressPrinter(c.App.ErrWriter, c.Duration("progress-interval"))
	}
	return cfg, maxErr, nil
}

func endpointFromFlags(c *cli.Context) (loadgen.Endpoint, error) {
	key := c.String("api-key")
	if key == "" {
		key = os.Getenv(apiKeyEnv)
	}
	timeout := c.Float64("request-timeout-seconds")
	if !finiteNonNegative(timeout) {
		return loadgen.Endpoint{}, usagef("--request-timeout-seconds must be a finite number >= 0")
	}
	ep := loadgen.Endpoint{URL: c.String("url"), Path: c.String("endpoint"), Type: c.String("endpoint-type"),
		Model: c.String("model"), APIKey: key, Streaming: c.Bool("streaming"),
		LegacyMaxTokens: c.Bool("use-legacy-max-tokens"), ServerTokenCount: c.Bool("use-server-token-count"),
		PerChunkUsage: c.Bool("per-chunk-usage"), Timeout: realrun.Seconds(timeout),
		Prompts: loadgen.Prompts{TokenIDs: c.Bool("prompt-token-ids"), VocabSize: c.Int("vocab-size"),
			BlockSize: traces.MooncakeBlockSize, Seed: c.Int64("random-seed")}}
	for _, s := range c.Generic("header").(*repeated).values {
		h, err := loadgen.ParseHeader(s)
		if err != nil {
			return ep, usage.Wrap(err)
		}
		ep.Headers = append(ep.Headers, h)
	}
	for _, s := range c.StringSlice("extra-inputs") {
		x, err := loadgen.ParseExtra(s)
		if err != nil {
			return ep, usage.Wrap(err)
		}
		ep.Extra = append(ep.Extra, x)
	}
	if err := ep.LoadTokenizer(c.String("tokenizer")); err != nil {
		return ep, usage.Wrap(err)
	}
	return ep, usage.Wrap(ep.Validate())
}

// repeated is a flag value given any number of times, each whole (commas
// included, unlike a StringSliceFlag's).
type repeated struct{ values []string }

func (r *repeated) Set(s string) error {
	r.values = append(r.values, s)
	return nil
}

func (r *repeated) String() string { return strings.Join(r.values, "\n") }

func finiteNonNegative(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 }

// progressPrinter renders progress on errw: a bar on a terminal, a plain
// line every 10 s otherwise (every interval when it is > 0).
func progressPrinter(errw io.Writer, interval time.Duration) (func(loadgen.Progress), time.Duration) {
	bar, every := progress.ForTime(errw, interval)
	return func(p loadgen.Progress) { bar.Update(p.Done, int64(p.Total), p.String(), p.Final) }, every
}
