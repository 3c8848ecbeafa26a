package peerruns

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/simbench/simbench/results"
)

// glFile is a guidellm benchmarks file (guidellm 0.4 and later).
type glFile struct {
	Metadata struct {
		GuideLLMVersion string `json:"guidellm_version"`
	} `json:"metadata"`
	Args struct {
		Model *string `json:"model"`
	} `json:"args"`
	Benchmarks []glBenchmark `json:"benchmarks"`
}

type glBenchmark struct {
	Config struct {
		Strategy struct {
			Type           string   `json:"type_"`
			MaxConcurrency *int     `json:"max_concurrency"`
			Rate           *float64 `json:"rate"`
		} `json:"strategy"`
	} `json:"config"`
	Metrics  map[string]json.RawMessage `json:"metrics"`
	Duration *float64                   `json:"duration"`
}

// glDist is one status (successful, errored, …) of a guidellm metric.
type glDist struct {
	Mean        *float64           `json:"mean"`
	StdDev      *float64           `json:"std_dev"`
	Min         *float64           `json:"min"`
	Max         *float64           `json:"max"`
	TotalSum    *float64           `json:"total_sum"`
	Percentiles map[string]float64 `json:"percentiles"`
}

// glPercentiles maps guidellm's percentile keys onto AIPerf's; p001 (0.1)
// and p999 (99.9) have no AIPerf counterpart.
var glPercentiles = map[string]string{"p01": "p1", "p05": "p5", "p10": "p10", "p25": "p25", "p50": "p50",
	"p75": "p75", "p90": "p90", "p95": "p95", "p99": "p99"}

func (d *glDist) stats() map[string]float64 {
	out := map[string]float64{}
	for name, v := range map[string]*float64{"avg": d.Mean, "std": d.StdDev, "min": d.Min, "max": d.Max} {
		if v != nil {
			out[name] = *v
		}
	}
	for k, v := range d.Percentiles {
		if name, ok := glPercentiles[k]; ok {
			out[name] = v
		}
	}
	return out
}

// glMetrics maps guidellm's per-request metrics onto AIPerf's, with the
// factor to display units. Its inter_token_latency_ms is (latency −
// TTFT)/(output_tokens − 1) per request, AIPerf's; its
// time_per_output_token_ms divides the whole latency, TTFT included, and
// is not read.
var glMetrics = []struct {
	name, tag string
	scale     float64
}{
	{"request_latency", results.TagRequestLatency, 1000},
	{"time_to_first_token_ms", results.TagTTFT, 1},
	{"inter_token_latency_ms", results.TagITL, 1},
	{"output_token_count", results.TagOSL, 1},
	{"prompt_token_count", results.TagISL, 1},
}

func openGuideLLM(path string, index int) (*Run, error) {
	var f glFile
	if err := readJSON(path, &f); err != nil {
		return nil, err
	}
	if index < 0 {
		if len(f.Benchmarks) != 1 {
			return nil, fmt.Errorf("%s: a guidellm file of %d benchmarks: name one as %s (0-based)",
				path, len(f.Benchmarks), filepath.Join(path, "benchmark_N"))
		}
		index = 0
	}
	if index >= len(f.Benchmarks) {
		return nil, fmt.Errorf("%s: no benchmark %d (the file has %d)", path, index, len(f.Benchmarks))
	}
	where := fmt.Sprintf("%s: benchmarks[%d]", path, index)
	bm := &f.Benchmarks[index]
	run := &Run{Name: strings.TrimSuffix(filepath.Base(path), ".json") + "/benchmark_" + strconv.Itoa(index),
		Format: FormatGuideLLM, NoWorkload: "guidellm's benchmarks file is not rebuilt as a workload"}
	p, err := guideLLMProfile(where, bm)
	if err != nil {
		return nil, err
	}
	run.Profile = p
	run.warn("guidellm's percentiles come from its own estimator, not numpy's linear interpolation: they may differ from AIPerf's by up to a sample; its time_per_output_token_ms includes the TTFT and is not compared")
	run.Profile.InputConfig, err = guideLLMInputConfig(&f, bm)
	return run, err
}

func guideLLMProfile(where string, bm *glBenchmark) (*results.Profile, error) {
	totals, err := glTotals(where, bm.Metrics)
	if err != nil {
		return nil, err
	}
	if bm.Duration == nil || !(*bm.Duration > 0) {
		return nil, missing(where, "duration")
	}
	dists := map[string]*glDist{}
	for _, m := range glMetrics {
		if dists[m.name], err = glSuccessful(where, bm.Metrics, m.name); err != nil {
			return nil, err
		}
	}
	dur, n := *bm.Duration, totals["successful"]
	p := newProfile()
	p.scalar(results.TagRequestThroughput, n/dur)
	p.dist(results.TagRequestLatency, dists["request_latency"].stats(), 1000)
	p.scalar(results.TagRequestCount, n)
	p.dist(results.TagTTFT, dists["time_to_first_token_ms"].stats(), 1)
	p.dist(results.TagITL, dists["inter_token_latency_ms"].stats(), 1)
	osl, isl := sum(dists["output_token_count"]), sum(dists["prompt_token_count"])
	p.scalar(results.TagOutputThroughput, osl/dur)
	p.dist(results.TagOSL, dists["output_token_count"].stats(), 1)
	p.dist(results.TagISL, dists["prompt_token_count"].stats(), 1)
	p.scalar(results.TagTotalOutputTokens, osl)
	p.scalar(results.TagBenchmarkDuration, dur)
	p.scalar(results.TagTotalISL, isl)
	p.scalar(results.TagTotalOSL, osl)
	if e := totals["errored"]; e > 0 {
		p.scalar(results.TagErrorRequestCount, e)
	}
	p.scalar(results.TagTotalThroughput, (isl+osl)/dur)
	return p.p, nil
}

// glTotals reads metrics.request_totals.
func glTotals(where string, metrics map[string]json.RawMessage) (map[string]float64, error) {
	raw, ok := metrics["request_totals"]
	if !ok {
		return nil, missing(where, "metrics.request_totals")
	}
	var totals map[string]float64
	if err := json.Unmarshal(raw, &totals); err != nil {
		return nil, fmt.Errorf("%s: field \"metrics.request_totals\": %w", where, err)
	}
	if _, ok := totals["successful"]; !ok {
		return nil, missing(where, "metrics.request_totals.successful")
	}
	return totals, nil
}

// glSuccessful reads metrics.<name>.successful; nil when the metric is
// absent.
func glSuccessful(where string, metrics map[string]json.RawMessage, name string) (*glDist, error) {
	raw, ok := metrics[name]
	if !ok {
		return &glDist{}, nil
	}
	var byStatus struct {
		Successful *glDist `json:"successful"`
	}
	if err := json.Unmarshal(raw, &byStatus); err != nil {
		return nil, fmt.Errorf("%s: field \"metrics.%s\": %w", where, name, err)
	}
	if byStatus.Successful == nil {
		return &glDist{}, nil
	}
	return byStatus.Successful, nil
}

// sum is the metric's total over the successful requests (NaN if absent).
func sum(d *glDist) float64 { return ptrValue(d.TotalSum) }

// guideLLMInputConfig records the model and the benchmark's strategy.
func guideLLMInputConfig(f *glFile, bm *glBenchmark) (json.RawMessage, error) {
	model := ""
	if f.Args.Model != nil {
		model = *f.Args.Model
	}
	st := bm.Config.Strategy
	ic := results.InputConfig{
		Endpoint: &results.EndpointConfig{ModelNames: []string{model}, Streaming: true},
		Loadgen:  &results.LoadgenConfig{},
	}
	if st.MaxConcurrency != nil {
		ic.Loadgen.Concurrency = *st.MaxConcurrency
	}
	if st.Rate != nil && finite(*st.Rate) {
		ic.Loadgen.RequestRate = *st.Rate
		ic.Loadgen.ArrivalPattern = st.Type
	}
	return encodeInputConfig(ic, FormatGuideLLM)
}
