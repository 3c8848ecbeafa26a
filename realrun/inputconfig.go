package realrun

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/simbench/simbench/loadgen"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// inputConfig is AIPerf's input_config for the run (never the API key).
// A shard describes the whole run in "loadgen" and "workload" and itself
// under "simbench".
func inputConfig(dir string, wl *traces.Workload, cfg *loadgen.Config, o Options, startLate time.Duration) (*results.InputConfig, error) {
	ep := &cfg.Endpoint
	extra := make([][2]any, 0, len(ep.Extra))
	for _, x := range ep.Extra {
		extra = append(extra, [2]any{x.Key, x.Value})
	}
	s, d := o.Spec, traces.DefaultSynth
	seed, fixed := s.Seed(), hasTimestamps(wl)
	input := &results.InputSection{Extra: extra, RandomSeed: &seed, FixedSchedule: &fixed}
	if len(ep.Headers) > 0 { // AIPerf's input.headers, credentials redacted
		h, err := json.Marshal(ep.RecordedHeaders())
		if err != nil {
			panic(err) // [][2]string always marshals
		}
		input.Unknown = map[string]json.RawMessage{"headers": h}
	}
	if s.IsTrace() {
		input.File = *s.Trace
	} else {
		input.Prompt = &results.Prompt{
			InputTokens:  results.TokenSpec{Mean: float64(orInt(s.ISL, d.ISL)), Stddev: float64(orInt(s.ISLStddev, 0))},
			OutputTokens: results.TokenSpec{Mean: float64(orInt(s.OSL, d.OSL)), Stddev: float64(orInt(s.OSLStddev, 0))}}
	}
	full := o.Shard.full(wl)
	wi, err := workloadInfo(full, o.Spec)
	if err != nil {
		return nil, err
	}
	return &results.InputConfig{
		Endpoint: &results.EndpointConfig{ModelNames: []string{ep.Model}, Type: ep.Type,
			CustomEndpoint: endpointPath(ep), Streaming: ep.Streaming, URL: ep.URL},
		Input:    input,
		Loadgen:  loadgenConfig(o, full),
		Output:   &results.OutputConfig{ArtifactDirectory: results.PublishedPath(dir)},
		Simbench: o.Shard.simbenchSection(wl, startLate),
		Workload: wi,
	}, nil
}

func endpointPath(ep *loadgen.Endpoint) string {
	if ep.Path != "" {
		return "/" + strings.TrimPrefix(ep.Path, "/")
	}
	if ep.Type == loadgen.EndpointCompletions {
		return "/v1/completions"
	}
	return "/v1/chat/completions"
}

func loadgenConfig(o Options, wl *traces.Workload) *results.LoadgenConfig {
	warm := 0
	for i := range wl.Requests {
		if wl.Requests[i].Warmup {
			warm++
		}
	}
	lg := &results.LoadgenConfig{RequestCount: len(wl.Requests) - warm, WarmupRequestCount: &warm, Concurrency: wl.Concurrency}
	switch s := o.Spec; {
	case s.IsTrace():
	case s.RequestRate != nil:
		lg.RequestRate = *s.RequestRate
		pattern := ""
		if s.ArrivalPattern != nil {
			pattern = *s.ArrivalPattern
		}
		lg.ArrivalPattern = strings.ToLower(strings.TrimSpace(pattern))
		if lg.ArrivalPattern == "" {
			lg.ArrivalPattern = traces.ModePoisson
		}
		if lg.ArrivalPattern == traces.ModeGamma {
			k := traces.DefaultSynth.GammaShape
			if s.GammaShape != nil {
				k = *s.GammaShape
			}
			lg.ArrivalSmoothness = &k
		}
	default:
		lg.ArrivalPattern = "concurrency_burst"
	}
	if o.BenchmarkDuration > 0 {
		lg.BenchmarkDuration = o.BenchmarkDuration
	}
	return lg
}

func orInt(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}
