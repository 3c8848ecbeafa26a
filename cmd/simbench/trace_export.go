package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/internal/warning"
	"github.com/simbench/simbench/peerruns"
	"github.com/simbench/simbench/traces"
)

// ---- trace export ----

func traceExportCommand() *cli.Command {
	return &cli.Command{
		Name:        "export",
		Usage:       "write the workload another tool's run replayed (an inference-perf stage; a vllm, SGLang or guidellm result with per-request lists) as Mooncake JSONL, for simbench sim --trace",
		ArgsUsage:   "RUN",
		UsageText:   "simbench trace export (REPORT/stage_N | vllm-bench.json | sglang-bench.jsonl[/run_N] | guidellm.json[/benchmark_N]) -o OUT.jsonl",
		Description: help("trace_export"),
		Flags:       []cli.Flag{outputFlag()},
		Action:      traceExportAction,
	}
}

func traceExportAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("trace export takes one RUN, got %d arguments", c.NArg())
	}
	path := c.Args().First()
	out, err := outputArg(c, "trace export")
	if err != nil {
		return err
	}
	if peerruns.Detect(path) == "" {
		if st, err := os.Stat(filepath.Join(path, traces.WorkloadFile)); err == nil && st.Mode().IsRegular() {
			return usagef("%s is a run directory: its %s is the trace already", path, traces.WorkloadFile)
		}
		return usagef("%s: not another tool's run (an inference-perf report stage, a vllm bench serve, SGLang bench_serving or guidellm result)", path)
	}
	run, err := peerruns.Open(path)
	if err != nil {
		return err
	}
	if run.Workload == nil {
		return fmt.Errorf("%s: no workload to export: %s", path, run.NoWorkload)
	}
	warning.Print(c.App.ErrWriter, run.WorkloadNotes)
	wl := run.Workload
	if err := writeTrace(c, out, wl); err != nil {
		return err
	}
	fmt.Fprintf(summaryWriter(c, out), "wrote %d requests to %s (digest %s)\nreplay: simbench sim --trace %s%s\n",
		len(wl.Requests), outName(out), wl.Digest, outName(out), replayFlags(wl))
	return nil
}

// replayFlags are the simbench sim flags that replay wl as it was sent:
// what Mooncake JSONL cannot record (its hash block size when not 512,
// the client's concurrency: a closed loop's, or an open loop's cap).
func replayFlags(wl *traces.Workload) string {
	var s string
	if wl.BlockSize != traces.MooncakeBlockSize {
		s += fmt.Sprintf(" --hash-block-size %d", wl.BlockSize)
	}
	if wl.Concurrency > 0 {
		s += fmt.Sprintf(" --concurrency %d", wl.Concurrency)
	}
	return s
}
