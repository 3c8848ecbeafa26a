package sim

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/servermetrics"
	"github.com/simbench/simbench/traces"
)

// WorkloadInput describes the workload s built (wl) as AIPerf's
// input_config would: its "input" and "loadgen" sections, for WriteRun.
func WorkloadInput(s traces.Spec, wl *traces.Workload) (*results.InputConfig, error) {
	if s.IsTrace() {
		return traceInput(*s.Trace, wl, s.Filter()), nil
	}
	syn, err := s.Synth()
	if err != nil {
		return nil, err
	}
	return synthInput(syn), nil
}

// traceInput describes a trace replay as AIPerf's input_config would.
func traceInput(file string, wl *traces.Workload, f traces.Filter) *results.InputConfig {
	fixed := true
	in := &results.InputSection{File: file, CustomDatasetType: "mooncake_trace", FixedSchedule: &fixed,
		FixedScheduleAutoOffset: f.RebaseTime, FixedScheduleEndOffset: max(f.EndMs, 0), FixedScheduleSpeedup: max(f.Speedup, 0)}
	if f.HasWindow || f.StartMs > 0 {
		in.FixedScheduleStartOffset = &f.StartMs
	}
	return &results.InputConfig{Input: in,
		Loadgen: &results.LoadgenConfig{RequestCount: countMeasured(wl), Concurrency: wl.Concurrency}}
}

// synthInput describes a synthetic workload as AIPerf's input_config would.
func synthInput(s traces.SynthSpec) *results.InputConfig {
	lg := &results.LoadgenConfig{RequestCount: s.RequestCount, WarmupRequestCount: &s.WarmupCount,
		RandomSeed: &s.Seed, Concurrency: s.Concurrency}
	if s.Mode == traces.ModeConcurrency {
		lg.ArrivalPattern = "concurrency_burst"
	} else {
		lg.RequestRate, lg.ArrivalPattern = s.Rate, s.Mode
		if s.Mode == traces.ModeGamma {
			lg.ArrivalSmoothness = &s.GammaShape
		}
	}
	prompt := &results.Prompt{
		InputTokens:  results.TokenSpec{Mean: float64(s.ISL), Stddev: float64(s.ISLStddev), BlockSize: &s.BlockSize},
		OutputTokens: results.TokenSpec{Mean: float64(s.OSL), Stddev: float64(s.OSLStddev)},
	}
	if s.Turns > 1 {
		prompt.Turns, prompt.TurnDelayMs = s.Turns, &s.TurnDelayMs
	}
	return &results.InputConfig{Loadgen: lg, Input: &results.InputSection{Prompt: prompt}}
}

func countMeasured(wl *traces.Workload) int {
	n := 0
	for i := range wl.Requests {
		if !wl.Requests[i].Warmup {
			n++
		}
	}
	return n
}

// WriteText prints what a simulated run of cfg measured and the files it
// wrote.
func (f *RunFiles) WriteText(w io.Writer, cfg Config) error {
	s, p := f.Summary, f.Profile
	fmt.Fprintf(w, "simulated %d requests (%d rejected, %d warmup) on %d %s worker(s), %s router, %s timing: %.1f s of virtual time\n",
		s.Requests, s.Rejected, s.Warmup, cfg.Workers, s.Engine, s.Router, s.Timing, s.SimulatedSeconds)
	stat := func(tag, st string) string {
		if v, ok := p.Value(tag, st); ok {
			return fmt.Sprintf("%.2f", v)
		}
		return "n/a"
	}
	fmt.Fprintf(w, "  TTFT p50 %s ms, p99 %s ms; ITL p50 %s ms; request throughput %s req/s\n",
		stat(results.TagTTFT, "p50"), stat(results.TagTTFT, "p99"), stat(results.TagITL, "p50"),
		stat(results.TagRequestThroughput, "avg"))
	fmt.Fprintf(w, "  prefix-cache reuse %.1f%%, %d preemptions, KV peak %.1f%%, %d steps\n",
		100*s.PrefixCacheReusedRatio, s.Preemptions, 100*s.KVPeakUsage, s.Steps)
	if blocks, on := cfg.offloadTierBlocks(); on {
		var stored, loaded int64
		for _, ws := range s.Workers {
			stored, loaded = stored+ws.OffloadStoredBlocks, loaded+ws.OffloadLoadedBlocks
		}
		fmt.Fprintf(w, "  CPU KV offload (%d blocks a worker): %d prompt blocks stored, %d loaded back instead of computed\n", blocks, stored, loaded)
	}
	if sp := s.Speculative; sp != nil {
		fmt.Fprintf(w, "  speculative decoding %s, %d draft tokens: acceptance rate %.1f%% (accepted / drafted), mean accepted length %.2f tokens a step\n",
			sp.Method, sp.NumSpeculativeTokens, 100*sp.AcceptanceRate, sp.MeanAcceptedLength)
	}
	if _, ok := p.Value(results.TagGoodput, "avg"); ok {
		good, _ := p.Value(results.TagGoodRequestCount, "avg")
		fmt.Fprintf(w, "  goodput %s req/s, %.0f good requests, SLO attainment %s\n", stat(results.TagGoodput, "avg"),
			good, stat(results.TagAttainment, "avg"))
	}
	names := []string{results.RecordsName, results.ProfileJSONName, results.ProfileCSVName, SummaryName}
	if f.ServerMetrics != nil {
		names = append(names, servermetrics.JSONName, servermetrics.CSVName)
	}
	if f.TTFTBreakdown != nil {
		names = append(names, servermetrics.TTFTBreakdownName)
		if err := f.TTFTBreakdown.WriteText(w); err != nil {
			return err
		}
	}
	for _, name := range names {
		fmt.Fprintf(w, "wrote %s\n", filepath.Join(f.Dir, name))
	}
	return nil
}
