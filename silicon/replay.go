package silicon

import (
	"cmp"
	"context"
	"fmt"
	"math"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

// Config is base with the stage's hardware and engine: its GPU, model,
// tensor parallelism and dtype, and its vLLM settings (its CPU KV
// offloading among them). Everything else
// (timing, frontend) stays base's. Server metrics are off: the corpus
// publishes none to compare.
func (s *Stage) Config(base sim.Config) (sim.Config, error) {
	c := base
	c.Workers = max(s.Engine.Workers, 1)
	c.Disaggregation = nil
	c.ServerMetrics.Enabled = false
	h := &c.Hardware
	h.CPU, h.GPU, h.TensorParallel, h.DType = "", s.Hardware.GPU, s.Hardware.TP, s.Hardware.DType
	h.Model, h.CustomModel = s.Hardware.Model, nil
	if s.Hardware.CustomModel != nil {
		m := *s.Hardware.CustomModel
		h.CustomModel = &m
	}
	e := &c.Engine
	e.Type = s.Engine.Type
	e.MaxNumSeqs, e.MaxNumBatchedTokens, e.MaxModelLen = s.Engine.MaxNumSeqs, s.Engine.MaxNumBatchedTokens, s.Engine.MaxModelLen
	e.EnablePrefixCaching, e.EnableChunkedPrefill = s.Engine.EnablePrefixCaching, s.Engine.EnableChunkedPrefill
	e.BlockSize, e.NumGPUBlocks = s.Engine.BlockSize, s.Engine.NumGPUBlocks
	e.KVOffload = nil
	if b := s.Engine.CPUKVBlocks; b != nil && *b > 0 {
		e.KVOffload = &sim.KVOffloadConfig{CPUBlocks: *b} // vLLM's OffloadingConnector; loads over the GPU's host link
	}
	if s.Engine.GPUMemoryUtilization > 0 {
		e.GPUMemoryUtilization = s.Engine.GPUMemoryUtilization
	}
	if err := c.Validate(); err != nil {
		return sim.Config{}, fmt.Errorf("%s: %w", s.ID, err)
	}
	return c, nil
}

// warmupArrivalsS is how many seconds of arrivals a capped replay sends
// ahead of its measured requests, beyond the first cycle of unique
// prompts: long enough for the server's in-flight count to reach its
// steady state, or near it on the reasoning stages (mean E2E 10–41 s),
// whose capped replays' ITL and TTFT means come within 2 % of their whole
// replays' all the same (ITL within 0.2 %).
const warmupArrivalsS = 30

// Replay is the workload a stage replays: inference-perf's shared_prefix
// prompts sent at the stage's rate, every prompt's ISL and OSL the
// stage's. The arrivals are those of inference-perf's "constant" load
// type, which is not evenly spaced: its timer (inference_perf/loadgen/
// load_timer.py, ConstantLoadTimer) draws an exponential gap per request
// and rescales the gaps to sum to the stage's duration, so requests
// arrive as a Poisson process with their count fixed
// (traces.ModePoissonSpan, drawn from the simulator's seed, not the
// client's unseeded draw). Its bursts are what spread a stage's latencies
// around their means at a fixed ISL and OSL.
//
// The unique prompts cycle in order, each one whole a prefix group of its
// own (its full KV blocks shared by its repeats; the tokens past the last
// full block unique to each request), as inference-perf's data index
// cycles them. Its first LeadIn(maxRequests) requests are sent but not
// measured.
//
// The full replay (maxRequests 0, or not below the stage's count)
// measures every request of the stage, as the real run did, from the
// state the real stage started in. The first stage starts cold: its cold
// first cycle is measured. A later stage starts with one cycle of its
// prompts as a warmup phase, which its requests wait out: the
// stages of a deployment ran one after another on one server
// (inference-perf's load stages), and inference-perf waits for every
// request of a stage to finish before the next begins, so a later stage
// started on an idle server holding the prefix cache the stage before
// left, neither cold nor loaded.
//
// maxRequests > 0 below the stage's count gives a shorter replay of the
// steady state, the one the priors are fitted on: the first cycle of
// unique prompts (cold) and warmupArrivalsS seconds of arrivals lead in,
// then maxRequests measured ones. This lead-in is not AIPerf's warmup
// phase, which the measured requests would wait out and then start on an
// idle server: it is the same constant-rate stream, so the measured
// requests meet the in-flight count of the steady state. A later stage's
// cold cycle is part of that stream, which its real run never had: on
// every later stage but one, the measured TTFT mean and p90, ITL mean and
// E2E p90 come within 2.2 % of a capped replay led in by a warmup phase
// instead, but on the Llama-2-70B stage at 20 requests/s, which the
// priors come near saturating, the cold cycle's backlog lasts into the
// measured requests (a TTFT mean over 4 times the warm start's). It is
// kept because the fit is fragile to it: the priors refitted on warm
// starts predicted unseen models' ITL worse (leave-one-model-out median
// 8.1 % against 5.4 %).
func (s *Stage) Replay(maxRequests int) (*traces.Workload, error) {
	return s.replay(maxRequests, 0)
}

// replay is Replay with the arrivals of draw draw (their seed).
func (s *Stage) replay(maxRequests int, draw int64) (*traces.Workload, error) {
	w := s.Workload
	bs := s.Engine.BlockSize
	warm := 0 // a full replay's lead-in is its warmup phase
	if !s.capped(maxRequests) {
		warm = s.LeadIn(maxRequests)
	}
	spec := traces.SynthSpec{
		Mode: traces.ModePoissonSpan, Rate: w.Rate, WarmupCount: warm,
		RequestCount: s.LeadIn(maxRequests) - warm + min(w.Requests, cmp.Or(maxRequests, w.Requests)),
		ISL:          w.ISL, OSL: w.OSL, BlockSize: bs,
		NumPrefixGroups: w.UniquePrompts, SharedPrefixTokens: w.ISL / bs * bs, Seed: draw,
	}
	if w.ClientConcurrencyCap != nil {
		spec.Concurrency = *w.ClientConcurrencyCap
	}
	wl, err := traces.Synthesize(spec)
	if err != nil {
		return nil, fmt.Errorf("%s: workload: %w", s.ID, err)
	}
	wl.Source = "silicon:" + s.ID
	return wl, nil
}

// capped reports whether a replay of maxRequests is Replay's shorter one.
func (s *Stage) capped(maxRequests int) bool {
	return maxRequests > 0 && maxRequests < s.Workload.Requests
}

// LeadIn is how many requests lead a replay of maxRequests measured ones
// unmeasured (see Replay): a full replay's warmup phase, or a capped
// replay's lead-in stream.
func (s *Stage) LeadIn(maxRequests int) int {
	w := s.Workload
	if !s.capped(maxRequests) {
		if s.Stage > 0 {
			return w.UniquePrompts // one cycle of its prompts (see Replay)
		}
		return 0
	}
	return min(w.Requests-maxRequests, w.UniquePrompts+int(math.Ceil(w.Rate*warmupArrivalsS)))
}

// Simulate replays the stage on cfg (already the stage's: see Config) and
// returns the simulated figures, in the terms the stage publishes.
func (s *Stage) Simulate(ctx context.Context, cfg sim.Config, maxRequests int) (Figures, error) {
	return s.simulateDraw(ctx, cfg, maxRequests, 0)
}

// simulateDraw is Simulate on draw draw of the stage's arrivals (Replay's
// is draw 0).
func (s *Stage) simulateDraw(ctx context.Context, cfg sim.Config, maxRequests int, draw int64) (Figures, error) {
	wl, err := s.replay(maxRequests, draw)
	if err != nil {
		return Figures{}, err
	}
	p, ends, err := simulateProfile(ctx, cfg, wl, s.LeadIn(maxRequests))
	if err != nil {
		return Figures{}, fmt.Errorf("%s: %w", s.ID, err)
	}
	f := figuresOf(p, s.Workload.OSL)
	if r, ok := results.CompletionRate(ends); ok {
		f.CompletionRate = &r
	}
	return f, nil
}

// simulateProfile runs wl on cfg and aggregates, as AIPerf does, the
// records of its requests from row skip on (warmup ones aside), with the
// completion times of those that succeeded.
func simulateProfile(ctx context.Context, cfg sim.Config, wl *traces.Workload, skip int) (*results.Profile, []int64, error) {
	agg := results.NewAggregator(nil)
	var ends []int64
	sink := func(r *results.Record) error {
		if r.TraceRow < skip {
			return nil
		}
		m := results.ComputeMetrics(r)
		agg.Add(&m)
		if m.Meta.BenchmarkPhase != "warmup" && m.Error == nil {
			ends = append(ends, m.Meta.RequestEndNs)
		}
		return nil
	}
	if _, err := sim.Run(ctx, cfg, wl, sink); err != nil {
		return nil, nil, err
	}
	return agg.Profile(), ends, nil
}

// figuresOf reads a profile as the corpus publishes: TTFT and E2E mean and
// percentiles, ITL from the means (the corpus's definition), throughput.
func figuresOf(p *results.Profile, osl int) Figures {
	get := func(tag, stat string) *float64 {
		if v, ok := p.Value(tag, stat); ok {
			return &v
		}
		return nil
	}
	f := Figures{
		TTFTMean: get(results.TagTTFT, "avg"), TTFTP50: get(results.TagTTFT, "p50"),
		TTFTP90: get(results.TagTTFT, "p90"), TTFTP99: get(results.TagTTFT, "p99"),
		E2EMean: get(results.TagRequestLatency, "avg"), E2EP50: get(results.TagRequestLatency, "p50"),
		E2EP90: get(results.TagRequestLatency, "p90"), E2EP99: get(results.TagRequestLatency, "p99"),
		RequestThroughput: get(results.TagRequestThroughput, "avg"),
	}
	if f.TTFTMean != nil && f.E2EMean != nil {
		itl := (*f.E2EMean - *f.TTFTMean) / float64(osl-1)
		f.ITLMean = &itl
	}
	return f
}
