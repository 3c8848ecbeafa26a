package peerruns

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// guidellm's benchmarks files come in three layouts, told apart by the
// members of their first benchmark (glSchemaOf):
//   - 0.1 (a GuidanceReport): benchmarks[] are reports, each with its args
//     and a list "benchmarks" of runs holding the per-request results and
//     no aggregates (guidellm_v01.go);
//   - 0.2 and 0.3: each benchmark has "request_totals", "args" (its
//     strategy) and "worker" (the model) beside guidellm's per-metric
//     summaries in "metrics" (0.2's percentiles have no p50);
//   - 0.4 and later: each benchmark has "config" (its strategy) and the
//     totals under "metrics"; the model is in the file's args (0.4 to 0.6),
//     its config.spec.backend (0.7 and later) or the benchmark's
//     config.backend. Its per-request lists, when the file has them, are
//     read instead of the summaries (guidellm_requests.go).
const (
	glSchema01 = "0.1"
	glSchema02 = "0.2/0.3"
	glSchema04 = "0.4+"
)

// glFile is a guidellm benchmarks file of guidellm 0.4 and later.
type glFile struct {
	Args struct {
		Model *string `json:"model"`
	} `json:"args"`
	Config struct {
		Spec struct {
			Backend struct {
				Model *string `json:"model"`
			} `json:"backend"`
		} `json:"spec"`
	} `json:"config"`
	Benchmarks []glBenchmark `json:"benchmarks"`
}

type glBenchmark struct {
	Config struct {
		Strategy glStrategy `json:"strategy"`
		Backend  struct {
			Model *string `json:"model"`
		} `json:"backend"`
	} `json:"config"`
	Metrics  map[string]json.RawMessage `json:"metrics"`
	Duration *float64                   `json:"duration"`
	// The measurement window (epoch seconds) and the per-request lists
	// (guidellm_requests.go).
	StartTime        *float64 `json:"start_time"`
	EndTime          *float64 `json:"end_time"`
	SchedulerMetrics struct {
		MeasureStartTime *float64 `json:"measure_start_time"`
		MeasureEndTime   *float64 `json:"measure_end_time"`
	} `json:"scheduler_metrics"`
	Requests glRequests `json:"requests"`
}

// glStrategy is a benchmark's scheduling strategy: synchronous,
// concurrent (streams), throughput (max_concurrency), constant or poisson
// (rate).
type glStrategy struct {
	Type           string   `json:"type_"`
	MaxConcurrency *int     `json:"max_concurrency"`
	Streams        *int     `json:"streams"`
	Rate           *float64 `json:"rate"`
}

// glSummary is one benchmark of guidellm 0.2 and later, whose metrics are
// guidellm's own summaries, gathered from wherever its schema keeps them.
type glSummary struct {
	where       string // file and benchmark, for errors
	totalsField string // where the schema keeps the request totals
	totals      json.RawMessage
	metrics     map[string]json.RawMessage
	duration    *float64
	strategy    glStrategy
	model       string
}

// glDist is one status (successful, errored, …) of a guidellm metric.
type glDist struct {
	Mean        *float64           `json:"mean"`
	Median      *float64           `json:"median"`
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

// stats names the summary's statistics as AIPerf's. guidellm 0.2 writes no
// p50: its median, computed with the same estimator as its percentiles,
// stands in.
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
	if _, ok := out["p50"]; !ok && d.Median != nil {
		out["p50"] = *d.Median
	}
	return out
}

// glMetrics maps guidellm's per-request metrics onto AIPerf's, with the
// factor to display units. Its inter_token_latency_ms is (latency −
// TTFT)/(output_tokens − 1) per request, AIPerf's; its
// time_per_output_token_ms divides another span (0.4 and later: the whole
// latency, TTFT included; 0.2 and 0.3: first to last token, by all the
// output tokens) and is not read.
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

const glEstimatorWarning = "guidellm's percentiles come from its own estimator, not numpy's linear interpolation: they may differ from AIPerf's by up to a sample"

func openGuideLLM(path string, index int) (*Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var top struct {
		Benchmarks []map[string]json.RawMessage `json:"benchmarks"`
	}
	if err := decodeJSON(path, b, &top); err != nil {
		return nil, err
	}
	if len(top.Benchmarks) == 0 {
		return nil, fmt.Errorf("%s: field \"benchmarks\" is empty", path)
	}
	schema, err := glSchemaOf(path, top.Benchmarks[0])
	if err != nil {
		return nil, err
	}
	switch schema {
	case glSchema01:
		return openGuideLLM01(path, b, index)
	case glSchema02:
		return openGuideLLM02(path, b, index)
	}
	return openGuideLLM04(path, b, index)
}

// glSchemaOf tells guidellm's layouts apart by the members of the file's
// first benchmark.
func glSchemaOf(path string, first map[string]json.RawMessage) (string, error) {
	has := func(k string) bool { _, ok := first[k]; return ok }
	switch {
	case has("benchmarks"):
		return glSchema01, nil
	case has("request_totals") || has("worker"):
		return glSchema02, nil
	case has("config") || has("metrics"):
		return glSchema04, nil
	}
	return "", fmt.Errorf("%s: benchmarks[0]: a guidellm benchmark of no known schema: it has no field "+
		"\"benchmarks\" (0.1), \"request_totals\" or \"worker\" (0.2, 0.3), \"config\" or \"metrics\" (0.4 and later)", path)
}

// glPick resolves the index of the benchmark asked for in a file of n
// (-1: the file's only one).
func glPick(path string, index, n int) (int, error) {
	if index < 0 {
		if n != 1 {
			return 0, fmt.Errorf("%s: a guidellm file of %d benchmarks: name one as %s (0-based)",
				path, n, filepath.Join(path, "benchmark_N"))
		}
		return 0, nil
	}
	if index >= n {
		return 0, fmt.Errorf("%s: no benchmark %d (the file has %d)", path, index, n)
	}
	return index, nil
}

// newGuideLLMRun is the run of benchmark index of the file at path.
func newGuideLLMRun(path string, index int) *Run {
	return &Run{Name: strings.TrimSuffix(filepath.Base(path), ".json") + "/benchmark_" + strconv.Itoa(index),
		Format: FormatGuideLLM, NoWorkload: "guidellm's benchmarks file is not rebuilt as a workload"}
}

// openGuideLLM04 reads a benchmark of guidellm 0.4 and later.
func openGuideLLM04(path string, b []byte, index int) (*Run, error) {
	var f glFile
	if err := decodeJSON(path, b, &f); err != nil {
		return nil, err
	}
	index, err := glPick(path, index, len(f.Benchmarks))
	if err != nil {
		return nil, err
	}
	bm := &f.Benchmarks[index]
	s := &glSummary{where: fmt.Sprintf("%s: benchmarks[%d]", path, index), totalsField: "metrics.request_totals",
		totals: bm.Metrics["request_totals"], metrics: bm.Metrics, duration: bm.Duration,
		strategy: bm.Config.Strategy, model: firstModel(f.Args.Model, bm.Config.Backend.Model, f.Config.Spec.Backend.Model)}
	run := newGuideLLMRun(path, index)
	read, err := run.glListProfile(path, s, bm)
	switch {
	case err != nil:
		return nil, err
	case read:
		return run, nil
	}
	run.warn("%s; its time_per_output_token_ms includes the TTFT and is not compared", glEstimatorWarning)
	return run, s.fill(run)
}

// firstModel is the first model name given, "" for none.
func firstModel(names ...*string) string {
	for _, n := range names {
		if n != nil && *n != "" {
			return *n
		}
	}
	return ""
}

// fill sets the run's profile from the benchmark's summaries.
func (s *glSummary) fill(run *Run) error {
	p, err := s.profile()
	if err != nil {
		return err
	}
	run.Profile = p
	run.Profile.InputConfig, err = guideLLMInputConfig(s.model, s.strategy, nil)
	return err
}

func (s *glSummary) profile() (*results.Profile, error) {
	totals, err := glTotals(s.where, s.totalsField, s.totals)
	if err != nil {
		return nil, err
	}
	if s.duration == nil || !(*s.duration > 0) {
		return nil, missing(s.where, "duration")
	}
	dists := map[string]*glDist{}
	for _, m := range glMetrics {
		if dists[m.name], err = glSuccessful(s.where, s.metrics, m.name); err != nil {
			return nil, err
		}
	}
	dur, n := *s.duration, totals["successful"]
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

// glTotals reads the request totals the schema keeps at field.
func glTotals(where, field string, raw json.RawMessage) (map[string]float64, error) {
	if raw == nil {
		return nil, missing(where, field)
	}
	var totals map[string]float64
	if err := json.Unmarshal(raw, &totals); err != nil {
		return nil, fmt.Errorf("%s: field %q: %w", where, field, err)
	}
	if _, ok := totals["successful"]; !ok {
		return nil, missing(where, field+".successful")
	}
	return totals, nil
}

// glSuccessful reads metrics.<name>.successful; empty when the metric is
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

// guideLLMInputConfig records the model, the benchmark's strategy (its
// concurrency cap and its rate) and the workload rebuilt, if any.
func guideLLMInputConfig(model string, st glStrategy, wl *traces.Workload) (json.RawMessage, error) {
	ic := results.InputConfig{
		Endpoint: &results.EndpointConfig{ModelNames: []string{model}, Streaming: true},
		Loadgen:  &results.LoadgenConfig{Concurrency: st.concurrency()},
		Workload: workloadInfo(wl),
	}
	if st.Rate != nil && finite(*st.Rate) && *st.Rate > 0 {
		ic.Loadgen.RequestRate = *st.Rate
		ic.Loadgen.ArrivalPattern = st.Type
	}
	return encodeInputConfig(ic, FormatGuideLLM)
}

// concurrency is the strategy's cap on requests in flight (0: none): its
// max_concurrency (throughput), its streams (concurrent), or 1 for
// synchronous.
func (st glStrategy) concurrency() int {
	switch {
	case st.MaxConcurrency != nil:
		return *st.MaxConcurrency
	case st.Streams != nil:
		return *st.Streams
	case st.Type == "synchronous":
		return 1
	}
	return 0
}
