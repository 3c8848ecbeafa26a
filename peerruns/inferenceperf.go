package peerruns

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/simbench/simbench/results"
)

// ipDist is one of inference-perf's distributions, in seconds or tokens:
// mean, min, max, median and pN (p0.1 … p99.9); null members are absent.
type ipDist map[string]*float64

// ipStage is a stage_N_lifecycle_metrics.json.
type ipStage struct {
	LoadSummary *ipLoadSummary `json:"load_summary"`
	Successes   *struct {
		Count      *int                `json:"count"`
		Latency    map[string]ipDist   `json:"latency"`
		Throughput map[string]*float64 `json:"throughput"`
		PromptLen  ipDist              `json:"prompt_len"`
		// PromptTokens replaces prompt_len from inference-perf 0.7 (its
		// distribution, with the cached and uncached totals beside it).
		PromptTokens ipDist `json:"prompt_tokens"`
	} `json:"successes"`
	Failures *struct {
		Count int `json:"count"`
	} `json:"failures"`
}

// ipLoadSummary is how the stage's load was sent: the rate asked for and
// how long the client sent for.
type ipLoadSummary struct {
	Count         *int     `json:"count"`
	RequestedRate *float64 `json:"requested_rate"`
	SendDuration  *float64 `json:"send_duration"`
}

// promptLen is the stage's prompt length distribution, under either
// name.
func (st *ipStage) promptLen() ipDist {
	if st.Successes.PromptLen != nil {
		return st.Successes.PromptLen
	}
	return st.Successes.PromptTokens
}

// stats maps the distribution's members to AIPerf's statistics; members
// AIPerf has no statistic for (p0.1, p99.9) are left out.
func (d ipDist) stats() map[string]float64 {
	out := map[string]float64{}
	for k, v := range d {
		if v == nil {
			continue
		}
		name, ok := ipStatName(k)
		if ok {
			out[name] = *v
		}
	}
	return out
}

func ipStatName(k string) (string, bool) {
	switch k {
	case "mean":
		return "avg", true
	case "median":
		return "p50", true
	case "min", "max":
		return k, true
	}
	if p, ok := strings.CutPrefix(k, "p"); ok {
		return percentileStat(p)
	}
	return "", false
}

func (d ipDist) mean() (float64, bool) {
	v, ok := d["mean"]
	if !ok || v == nil {
		return 0, false
	}
	return *v, true
}

// stagePath is the file of stage i of the report in dir whose stage
// files carry prefix.
func stagePath(dir, prefix string, i int) string {
	return filepath.Join(dir, fmt.Sprintf("%sstage_%d_lifecycle_metrics.json", prefix, i))
}

// reportStages lists the stage indices of the report in dir whose stage
// files carry prefix, ascending.
func reportStages(dir, prefix string) []int {
	entries, _ := os.ReadDir(dir)
	var out []int
	for _, e := range entries {
		if m := stageFile.FindStringSubmatch(e.Name()); m != nil && m[1] == prefix {
			out = append(out, atoi(m[2]))
		}
	}
	slices.Sort(out)
	return out
}

func openInferencePerf(s spot) (*Run, error) {
	dir, index := s.path, s.index
	if len(s.ambiguous) > 0 {
		return nil, fmt.Errorf("%s: the stage files of %d inference-perf reports (file prefixes %s): name one stage file",
			dir, len(s.ambiguous), quoteAll(s.ambiguous))
	}
	stages := reportStages(dir, s.prefix)
	if index < 0 {
		if len(stages) != 1 {
			return nil, fmt.Errorf("%s: an inference-perf report of %d stages (%s): name one as %s",
				dir, len(stages), joinInts(stages), filepath.Join(dir, "stage_N"))
		}
		index = stages[0]
	}
	if !slices.Contains(stages, index) {
		return nil, fmt.Errorf("%s: no stage %d in this inference-perf report (stages: %s)", dir, index, joinInts(stages))
	}
	cfg, err := findIPConfig(dir)
	if err != nil {
		return nil, err
	}
	path := stagePath(dir, s.prefix, index)
	var st ipStage
	if err := readJSON(path, &st); err != nil {
		return nil, err
	}
	run := &Run{Name: reportName(dir) + "/" + s.prefix + "stage_" + strconv.Itoa(index), Format: FormatInferencePerf}
	if cfg.path == "" {
		run.warn("no %s in the report directory or the one above it: api.streaming is taken as true, and the workload and the output length are not known", configName)
	} else if filepath.Dir(cfg.path) != filepath.Clean(dir) {
		run.warn("the configuration read is %s, the one above the report directory", cfg.path)
	}
	load, err := cfg.stageLoad(index, st.LoadSummary)
	if err != nil {
		return nil, err
	}
	load.afterOthers = index > stages[0]
	if err := run.inferencePerfProfile(path, &st, cfg, load); err != nil {
		return nil, err
	}
	var isl float64
	if st.Successes != nil {
		isl, _ = st.promptLen().mean()
	}
	if err := run.rebuildWorkload(cfg, load, isl); err != nil {
		return nil, err
	}
	if isFile(filepath.Join(dir, s.prefix+"per_request_lifecycle_metrics.json")) {
		run.warn("per_request_lifecycle_metrics.json is not read: the comparison is of aggregates only")
	}
	run.Profile.InputConfig, err = cfg.inputConfig(load, run.Workload)
	return run, err
}

func quoteAll(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}

// reportName labels a report by its directory, or by the run directory
// above it when the report directory is inference-perf's "results".
func reportName(dir string) string {
	dir = filepath.Clean(dir)
	if base := filepath.Base(dir); base != "results" {
		return base
	}
	return filepath.Base(filepath.Dir(dir))
}

func joinInts(vs []int) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ", ")
}

func (r *Run) warn(format string, args ...any) {
	r.Warnings = append(r.Warnings, errors.New(r.Name+": "+fmt.Sprintf(format, args...)))
}

// inferencePerfProfile maps the stage's aggregates onto AIPerf's metrics.
func (r *Run) inferencePerfProfile(path string, st *ipStage, cfg *ipConfig, load stageLoad) error {
	s := st.Successes
	switch {
	case s == nil:
		return missing(path, "successes")
	case s.Count == nil:
		return missing(path, "successes.count")
	case *s.Count == 0:
		return r.failedStage(st)
	case s.Latency["request_latency"] == nil:
		return missing(path, "successes.latency.request_latency")
	}
	b := newProfile()
	b.scalar(results.TagRequestThroughput, ptrValue(s.Throughput["requests_per_sec"]))
	b.dist(results.TagRequestLatency, s.Latency["request_latency"].stats(), 1000)
	b.scalar(results.TagRequestCount, float64(*s.Count))
	streaming := cfg.API.Streaming == nil || *cfg.API.Streaming
	if streaming {
		b.dist(results.TagTTFT, s.Latency["time_to_first_token"].stats(), 1000)
	} else {
		r.warn("api.streaming is false: time_to_first_token is not compared")
	}
	r.warn("%s", "inference-perf re-counts output tokens from the streamed text and records about two inter-token samples per token "+
		"(kubernetes-sigs/inference-perf #565, #566): its time_per_output_token, normalized_time_per_output_token, inter_token_latency, output_len and output_tokens_per_sec are not compared")
	r.Profile = b.p
	if streaming {
		r.deriveFromOSL(b, s.Latency, s.Throughput["requests_per_sec"], load.osl)
	}
	b.dist(results.TagISL, st.promptLen().stats(), 1)
	if st.Failures != nil && st.Failures.Count > 0 {
		b.scalar(results.TagErrorRequestCount, float64(st.Failures.Count))
	}
	return nil
}

// failedStage is a stage without a successful request: its counts only.
func (r *Run) failedStage(st *ipStage) error {
	b := newProfile()
	b.scalar(results.TagRequestCount, 0)
	if st.Failures != nil && st.Failures.Count > 0 {
		b.scalar(results.TagErrorRequestCount, float64(st.Failures.Count))
	}
	r.Profile = b.p
	r.warn("no request succeeded: only the request counts are compared")
	return nil
}

// deriveFromOSL adds the request-level ITL average, (E2E − TTFT)/(OSL − 1),
// and the output length and throughput of the configured OSL, when
// ignore_eos fixes the output length; otherwise it says why there are none.
func (r *Run) deriveFromOSL(b *profile, lat map[string]ipDist, rps *float64, osl fixedOSL) {
	if osl.why != "" {
		r.warn("inter_token_latency, output_sequence_length and output_token_throughput are not compared: %s", osl.why)
		return
	}
	e2e, ok1 := lat["request_latency"].mean()
	ttft, ok2 := lat["time_to_first_token"].mean()
	if ok1 && ok2 && osl.n > 1 {
		itl := (e2e - ttft) / float64(osl.n-1) * 1000
		b.dist(results.TagITL, map[string]float64{"avg": itl}, 1)
		r.warn("inter_token_latency avg is derived as (request_latency avg − time_to_first_token avg)/(OSL − 1) = %.4g ms with the configured OSL %d (ignore_eos); it has no percentiles", itl, osl.n)
	}
	b.scalar(results.TagOutputThroughput, ptrValue(rps)*float64(osl.n))
	b.dist(results.TagOSL, map[string]float64{"avg": float64(osl.n)}, 1)
	r.warn("output_sequence_length avg is the configured OSL %d and output_token_throughput is request_throughput × %d (ignore_eos), not inference-perf's re-counted tokens", osl.n, osl.n)
}

func ptrValue(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}
