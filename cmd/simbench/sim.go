package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/simbench/simbench/internal/interrupt"
	"github.com/simbench/simbench/internal/progress"
	"github.com/simbench/simbench/internal/usage"
	"github.com/simbench/simbench/internal/warning"
	"github.com/simbench/simbench/results"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

func simCommand() *cli.Command {
	return &cli.Command{
		Name:  "sim",
		Usage: "replay a trace (or a synthetic workload) on the embedded LLM-serving simulator and write AIPerf files",
		UsageText: "simbench sim --trace FILE -o DIR [--workers N] [--router kv] [--engine vllm] [--config sim.yaml] ...\n" +
			"simbench sim --concurrency N --request-count N --isl T --osl T -o DIR ...\n" +
			"simbench sim --print-config [--config sim.yaml] [flags]",
		Description: help("sim") + "\n\n" + help("loadsweep"),
		Flags:       simFlags(),
		Action:      simAction,
	}
}

func simFlags() []cli.Flag {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "output-dir", Aliases: []string{"o", "artifact-dir", "output-artifact-dir"}, Usage: "run `DIR` to write the AIPerf files and sim_summary.json into (required)"},
		&cli.BoolFlag{Name: "progress", Usage: "show progress on stderr even when it is not a terminal"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print nothing but errors"},
		&cli.IntFlag{Name: "repeat", Value: 1, Usage: "simulate the same workload N times with simulator seeds seed, seed+1, … into DIR/run_0001, DIR/run_0002, …"},
	}
	flags = append(flags, simConfigFlags()...)
	flags = append(flags, gridFlags()...)
	flags = append(flags, loadSweepFlags()...)
	return append(flags, workloadFlags()...)
}

// simConfigFlags override keys of the YAML configuration; their defaults
// are DefaultConfig's (or --config's).
func simConfigFlags() []cli.Flag {
	d := sim.DefaultConfig()
	itoa, ftoa := strconv.Itoa, func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	return []cli.Flag{
		&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Usage: "simulator configuration `YAML` (engine, workers, router, timing, hardware, frontend)"},
		&cli.Int64Flag{Name: "sim-seed", DefaultText: "--random-seed, else the config's seed", Usage: "seed: the simulator's own random streams (router, step jitter and stalls, drift, client gaps, tie order, speculative acceptance); the workload keeps --random-seed"},
		&cli.BoolFlag{Name: "print-config", Usage: "print the effective configuration as YAML (of the timing models, only timing.model's section) and exit"},
		&cli.StringFlag{Name: "engine", DefaultText: d.Engine.Type, Usage: "engine.type: vllm, sglang or llamacpp"},
		&cli.IntFlag{Name: "workers", DefaultText: itoa(d.Workers), Usage: "workers: engine replicas behind the router"},
		&cli.StringFlag{Name: "router", DefaultText: d.Router.Policy, Usage: "router.policy: round_robin, random, least_loaded or kv"},
		&cli.Float64Flag{Name: "overlap-weight", DefaultText: ftoa(d.Router.OverlapWeight), Usage: "router.overlap_weight: kv router weight of prefill blocks"},
		&cli.Float64Flag{Name: "router-temperature", DefaultText: ftoa(d.Router.Temperature), Usage: "router.temperature: kv router softmax temperature, 0 = cheapest worker"},
		&cli.StringFlag{Name: "timing", DefaultText: d.Timing.Model, Usage: "timing.model: " + strings.Join(sim.TimingModels(), ", ")},
		&cli.StringFlag{Name: "timing-table", Usage: "timing.table.file: step-time CSV `FILE` (prefill_tokens,decode_seqs,step_ms); implies --timing table"},
		&cli.StringFlag{Name: "gpu", DefaultText: d.Hardware.GPU, Usage: "hardware.gpu: " + strings.Join(sim.GPUPresets(), ", ")},
		&cli.StringFlag{Name: "model-preset", DefaultText: d.Hardware.Model, Usage: "hardware.model, the architecture preset: " + strings.Join(sim.ModelPresets(), ", ")},
		&cli.StringFlag{Name: "model-config", Usage: "hardware.model_config: the model's Hugging Face config.json `FILE` (dense or mixture of experts)"},
		&cli.IntFlag{Name: "tensor-parallel", Aliases: []string{"tp"}, DefaultText: itoa(d.Hardware.TensorParallel), Usage: "hardware.tensor_parallel: GPUs per worker"},
		&cli.IntFlag{Name: "kv-block-size", DefaultText: itoa(d.Engine.BlockSize), Usage: "engine.block_size: tokens per KV block"},
		&cli.IntFlag{Name: "num-gpu-blocks", DefaultText: "from GPU memory", Usage: "engine.num_gpu_blocks: KV blocks per worker"},
		&cli.IntFlag{Name: "max-num-seqs", DefaultText: "the engine's for the GPU", Usage: "engine.max_num_seqs: running requests per worker (vLLM: 1024 on a GPU of 70 GiB or more other than an A100, else 256)"},
		&cli.IntFlag{Name: "max-num-batched-tokens", DefaultText: "vLLM's for the GPU", Usage: "engine.max_num_batched_tokens: token budget per step (vLLM: 8192 on a GPU of 70 GiB or more other than an A100, else 2048)"},
		&cli.BoolFlag{Name: "prefix-caching", DefaultText: "true", Usage: "engine.enable_prefix_caching (--prefix-caching=false turns it off)"},
		&cli.Float64Flag{Name: "kv-offloading-size", DefaultText: "off", Usage: "engine.kv_offload.size_gib: vLLM's CPU KV offloading, `GiB` of host memory per worker summed over its ranks (0 turns it off)"},
		&cli.Float64Flag{Name: "request-overhead-ms", DefaultText: "0", Usage: "frontend.request_overhead_ms: client send to engine arrival"},
		&cli.Float64Flag{Name: "response-overhead-ms", DefaultText: "0", Usage: "frontend.response_overhead_ms: engine token to client, every token"},
		&cli.Float64Flag{Name: "client-gap-ms", DefaultText: "0", Usage: "client.gap_ms: load generator time between a response's end and the next send from its slot"},
	}
}

func simAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("sim takes no arguments, got %q (a trace goes with --trace)", c.Args().First())
	}
	cfg, err := simConfig(c)
	if err != nil {
		return err
	}
	if c.Bool("print-config") {
		return printConfig(c.App.Writer, cfg)
	}
	dir := c.String("output-dir")
	if dir == "" {
		return usagef("sim needs -o DIR (the run directory to write)")
	}
	return simInto(c, cfg, dir)
}

// simInto runs what the flags ask into dir: a load sweep, a config grid,
// repeated runs or one run.
func simInto(c *cli.Context, cfg sim.Config, dir string) error {
	if swept, err := simLoadSweep(c, cfg, dir); swept {
		return err
	}
	wl, input, err := simWorkload(c, cfg)
	if err != nil {
		return err
	}
	if c.IsSet("grid") {
		return simGrid(c, cfg, wl, input, dir)
	}
	if c.IsSet("repeat") {
		return simRepeat(c, cfg, wl, input, dir)
	}
	if name := firstSet(c, []string{"shard", "shard-index", "shard-count"}); name != "" {
		return usagef("--%s splits a --grid: it needs --grid", name)
	}
	return writeOutputDir(c, dir, results.DropPartial, func(stage string) error { return simRun(c, cfg, wl, input, stage) })
}

// printConfig prints the effective configuration as YAML, with only the
// timing model it uses (a file that holds the others still reads).
func printConfig(w io.Writer, cfg sim.Config) error {
	b, err := cfg.UsedTimingYAML()
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// simRun simulates wl into dir, a staging directory (or a run directory
// inside one), and prints what it wrote under the published path.
func simRun(c *cli.Context, cfg sim.Config, wl *traces.Workload, input *results.InputConfig, dir string) error {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		// A simulation allocates fast and keeps little: collecting less often
		// cuts its CPU time by about a tenth (measured on the conversation
		// trace). The soft limit makes the collector frugal again when a big
		// run's heap grows.
		defer debug.SetGCPercent(debug.SetGCPercent(400))
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 30))
	}
	slos, err := goodputSLOs(c)
	if err != nil {
		return err
	}
	opts := []sim.Option{sim.WithSLOs(slos)}
	bar, every := simProgress(c, len(wl.Requests))
	if bar != nil {
		opts = append(opts, sim.WithProgress(func(p sim.Progress) {
			bar.Update(int64(p.Done), int64(p.Total), p.String(), p.Done == p.Total)
		}, every))
	}
	ctx, stop := interrupt.Context(c.Context, c.App.ErrWriter, os.Exit)
	defer stop()
	files, err := sim.WriteRun(ctx, dir, cfg, wl, input, opts...)
	if bar != nil {
		bar.Finish()
	}
	if err != nil && ctx.Err() != nil { // the staging directory is removed: a simulated run is written whole
		return cli.Exit(fmt.Sprintf("interrupted: the simulation stopped and its partial files in %s were removed", results.PublishedPath(dir)), interrupt.ExitCode)
	}
	if err != nil {
		return err
	}
	if err := traces.WriteWorkloadFile(dir, wl); err != nil { // a failed run's staging directory is removed
		return err
	}
	files.Dir = results.PublishedPath(dir)
	if !c.Bool("quiet") {
		return files.WriteText(c.App.Writer, cfg)
	}
	return nil
}

// simConfig is --config (or the defaults) with the flags applied, validated.
func simConfig(c *cli.Context) (sim.Config, error) {
	cfg := sim.DefaultConfig()
	if path := c.String("config"); path != "" {
		var err error
		if cfg, err = sim.LoadConfig(path); err != nil {
			return cfg, usage.Wrap(fmt.Errorf("--config %w", err))
		}
		warning.Print(c.App.ErrWriter, cfg.KeyWarnings())
	}
	applyConfigFlags(c, &cfg)
	if err := cfg.Validate(); err != nil {
		return cfg, usage.Wrap(fmt.Errorf("configuration: %w", err))
	}
	return cfg, nil
}

func applyConfigFlags(c *cli.Context, cfg *sim.Config) {
	for name, dst := range configFields(cfg) {
		if !c.IsSet(name) {
			continue
		}
		switch p := dst.(type) {
		case *string:
			*p = c.String(name)
		case *int:
			*p = c.Int(name)
		case *float64:
			*p = c.Float64(name)
		case *bool:
			*p = c.Bool(name)
		}
	}
	if c.IsSet("kv-offloading-size") {
		cfg.Engine.KVOffload = nil
		if gib := c.Float64("kv-offloading-size"); gib != 0 {
			cfg.Engine.KVOffload = &sim.KVOffloadConfig{SizeGiB: gib}
		}
	}
	if c.IsSet("timing-table") && !c.IsSet("timing") {
		cfg.Timing.Model = "table"
	}
	if c.IsSet("model-config") && !c.IsSet("model-preset") && cfg.Hardware.Model == sim.DefaultConfig().Hardware.Model {
		cfg.Hardware.Model = "" // not the default preset's name on another model's run
	}
	if c.IsSet("random-seed") {
		cfg.Seed = c.Int64("random-seed")
	}
	if c.IsSet("sim-seed") {
		cfg.Seed = c.Int64("sim-seed")
	}
}

// configFields are the configuration fields the simConfigFlags override,
// by flag name.
func configFields(cfg *sim.Config) map[string]any {
	return map[string]any{"engine": &cfg.Engine.Type, "workers": &cfg.Workers, "router": &cfg.Router.Policy,
		"overlap-weight": &cfg.Router.OverlapWeight, "router-temperature": &cfg.Router.Temperature,
		"timing": &cfg.Timing.Model, "timing-table": &cfg.Timing.Table.File, "gpu": &cfg.Hardware.GPU,
		"model-preset": &cfg.Hardware.Model, "model-config": &cfg.Hardware.ModelConfig, "tensor-parallel": &cfg.Hardware.TensorParallel,
		"kv-block-size": &cfg.Engine.BlockSize, "num-gpu-blocks": &cfg.Engine.NumGPUBlocks,
		"max-num-seqs": &cfg.Engine.MaxNumSeqs, "max-num-batched-tokens": &cfg.Engine.MaxNumBatchedTokens,
		"prefix-caching": &cfg.Engine.EnablePrefixCaching, "request-overhead-ms": &cfg.Frontend.RequestOverheadMs,
		"response-overhead-ms": &cfg.Frontend.ResponseOverheadMs, "client-gap-ms": &cfg.Client.GapMs}
}

// simWorkload builds the workload from the flags and warns on stderr
// where it leaves the range cfg was calibrated on.
func simWorkload(c *cli.Context, cfg sim.Config) (*traces.Workload, *results.InputConfig, error) {
	wl, err := workloadFromFlags(c)
	if err != nil {
		return nil, nil, err
	}
	warning.Print(c.App.ErrWriter, slices.Concat(cfg.HardwareWarnings(), cfg.PriorWarnings(), cfg.RangeWarnings(wl)))
	input, err := sim.WorkloadInput(workloadSpec(c), wl)
	return wl, input, err
}

// simProgress returns the progress bar and its period in finished
// requests, or nil when no progress is wanted: --quiet, or stderr is not a
// terminal and --progress was not given.
func simProgress(c *cli.Context, total int) (*progress.Bar, int) {
	return progress.ForCount(c.App.ErrWriter, c.Bool("quiet"), c.Bool("progress"), total)
}
