package peerruns

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// vllmMetrics maps vllm bench serve's per-request metrics onto AIPerf's.
// Its tpot is (latency − ttft)/(output_len − 1) per request, AIPerf's
// inter_token_latency; its itl pools the gaps between streamed chunks,
// AIPerf's inter_chunk_latency; e2el is the request latency
// (benchmark_serving.py of the vLLM 0.5 era named it latency).
var vllmMetrics = []struct{ name, tag string }{
	{"e2el", results.TagRequestLatency},
	{"latency", results.TagRequestLatency},
	{"ttft", results.TagTTFT},
	{"tpot", results.TagITL},
	{"itl", results.TagICL},
}

// benchShape is what a vllm-style result (vLLM's or SGLang's, which was
// adapted from it) names its figures, and what its itl is.
type benchShape struct {
	tool            string // for warnings: "vllm bench serve's"
	latency         string // the request latency's statistic name (e2el, latency, e2e_latency)
	totalThroughput string // the total token throughput's member
	chunkITL        bool   // itl is one gap per content chunk (AIPerf's inter_chunk_latency)
}

// runTotals are the run-level members written with "completed".
var runTotals = []string{"duration", "total_input_tokens", "total_output_tokens", "request_throughput", "output_throughput"}

func openVLLMBench(path string) (*Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if err := decodeJSON(path, b, &top); err != nil {
		return nil, err
	}
	nums, bad := numbers(top, isStatKey)
	if bad != "" {
		return nil, fmt.Errorf("%s:%d: field %q: %s is not a number", path, keyLine(b, bad), bad, strings.TrimSpace(string(top[bad])))
	}
	run := &Run{Name: strings.TrimSuffix(filepath.Base(path), ".json"), Format: FormatVLLMBench,
		NoWorkload: "vllm bench serve's result does not record its dataset"}
	lists, err := readLists(path, top, func(v any) error { return decodeJSON(path, b, v) })
	if err != nil {
		return nil, err
	}
	shape := benchShape{tool: "vllm bench serve's", latency: "e2el", totalThroughput: "total_token_throughput", chunkITL: true}
	if !hasStat(nums, "e2el") && hasStat(nums, "latency") {
		shape.latency = "latency"
		run.warn("the file names the request latency {mean,median,std,p99}_latency_ms (benchmark_serving.py's name before e2el): read as request_latency")
	}
	p := newProfile()
	if lists != nil {
		run.listProfile(p, lists, nums, shape)
		run.listWorkload("vllm bench serve's", path, lists, readBenchLoad(top))
	} else if err := run.aggregateProfile(p, path, nums, shape); err != nil {
		return nil, err
	}
	run.Profile = p.sorted()
	run.Profile.InputConfig, err = vllmInputConfig(top, run.Workload)
	return run, err
}

// aggregateProfile reads the file's statistics (no per-request lists). A
// file with none of the run totals (vllm-ascend's nightly results keep
// only the latency statistics) is read as those statistics; one with
// totals but no "completed" is not a result vLLM writes.
func (r *Run) aggregateProfile(p *profile, path string, nums map[string]float64, shape benchShape) error {
	completed, ok := nums["completed"]
	switch {
	case !ok && slices.ContainsFunc(runTotals, func(k string) bool { _, has := nums[k]; return has }):
		return missing(path, "completed")
	case !ok:
		r.warn("the file has no completed, failed, duration, totals or throughputs, only latency statistics: those are read; request_count is left out, since num_prompts counts the requests sent and the file does not say how many succeeded (the statistics are over those)")
		requestStats(p, nums, shape)
		r.itlNote(shape)
		return nil
	case completed > 0:
		p.scalar(results.TagRequestCount, completed)
		requestStats(p, nums, shape)
		r.throughputs(p, nums, shape)
	default:
		r.warn("no request completed: the per-request statistics it writes as 0 are not read")
		p.scalar(results.TagRequestCount, 0)
	}
	r.itlNote(shape)
	p.present(nums, results.TagTotalOutputTokens, "total_output_tokens")
	p.present(nums, results.TagBenchmarkDuration, "duration")
	p.present(nums, results.TagTotalISL, "total_input_tokens")
	p.present(nums, results.TagTotalOSL, "total_output_tokens")
	if f := nums["failed"]; f > 0 {
		p.scalar(results.TagErrorRequestCount, f)
	}
	return nil
}

// requestStats adds the distributions of the completed requests.
func requestStats(p *profile, nums map[string]float64, shape benchShape) {
	p.dist(results.TagRequestLatency, vllmStats(nums, shape.latency), 1)
	p.dist(results.TagTTFT, vllmStats(nums, "ttft"), 1)
	p.dist(results.TagITL, vllmStats(nums, "tpot"), 1)
	if shape.chunkITL {
		p.dist(results.TagICL, vllmStats(nums, "itl"), 1)
	}
	completed, ok := nums["completed"]
	if !ok || completed <= 0 {
		return
	}
	if v, ok := nums["total_output_tokens"]; ok {
		p.dist(results.TagOSL, map[string]float64{"avg": v / completed}, 1)
	}
	if v, ok := nums["total_input_tokens"]; ok {
		p.dist(results.TagISL, map[string]float64{"avg": v / completed}, 1)
	}
}

// throughputs adds the run's throughputs that the file has, and derives
// the total token throughput from the input and output ones (or the
// totals and the duration) where it has not.
func (r *Run) throughputs(p *profile, nums map[string]float64, shape benchShape) {
	p.present(nums, results.TagRequestThroughput, "request_throughput")
	p.present(nums, results.TagOutputThroughput, "output_throughput")
	if p.present(nums, results.TagTotalThroughput, shape.totalThroughput) {
		return
	}
	in, okIn := nums["input_throughput"]
	out, okOut := nums["output_throughput"]
	if okIn && okOut {
		p.scalar(results.TagTotalThroughput, in+out)
		r.warn("the file has no %s: total_token_throughput is derived as input_throughput + output_throughput", shape.totalThroughput)
	}
}

func (r *Run) itlNote(shape benchShape) {
	if shape.chunkITL {
		r.warn("%s itl pools the gaps between streamed chunks: it is compared as inter_chunk_latency; its tpot is inter_token_latency", shape.tool)
	}
}

// numbers keeps the result's numeric members. Others (request_rate "inf",
// nulls, strings, lists) are not statistics, except where a statistic is
// read (isStat): there a non-number is returned as bad, the first in
// name order.
func numbers(top map[string]json.RawMessage, isStat func(string) bool) (nums map[string]float64, bad string) {
	nums = map[string]float64{}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		s := strings.TrimSpace(string(top[k]))
		v, err := strconv.ParseFloat(s, 64)
		switch {
		case err == nil && finite(v):
			nums[k] = v
		case s != "null" && isStat(k) && bad == "":
			bad = k
		}
	}
	return nums, bad
}

// keyLine is the line of the first member named k.
func keyLine(b []byte, k string) int {
	key, _ := json.Marshal(k)
	return lineAt(b, int64(max(bytes.Index(b, key), 0)))
}

// isStatKey reports whether k names one of the statistics read.
func isStatKey(k string) bool {
	for _, m := range vllmMetrics {
		if strings.HasSuffix(k, "_"+m.name+"_ms") {
			return true
		}
	}
	switch k {
	case "completed", "failed", "duration", "total_input_tokens", "total_output_tokens",
		"request_throughput", "input_throughput", "output_throughput", "total_token_throughput":
		return true
	}
	return false
}

// hasStat reports whether the file has a statistic of metric m.
func hasStat(nums map[string]float64, m string) bool {
	return len(vllmStats(nums, m)) > 0
}

// vllmStats gathers metric m's {mean,median,std,pN}_<m>_ms statistics.
func vllmStats(nums map[string]float64, m string) map[string]float64 {
	out := map[string]float64{}
	suffix := "_" + m + "_ms"
	for k, v := range nums {
		stat, ok := strings.CutSuffix(k, suffix)
		if !ok {
			continue
		}
		switch {
		case stat == "mean":
			out["avg"] = v
		case stat == "median":
			out["p50"] = v
		case stat == "std":
			out["std"] = v
		case strings.HasPrefix(stat, "p"):
			if name, ok := percentileStat(stat[1:]); ok {
				out[name] = v
			}
		}
	}
	return out
}

// vllmInputConfig records the model, the request rate and the
// concurrency cap.
func vllmInputConfig(top map[string]json.RawMessage, wl *traces.Workload) (json.RawMessage, error) {
	var head struct {
		ModelID        string          `json:"model_id"`
		NumPrompts     int             `json:"num_prompts"`
		RequestRate    json.RawMessage `json:"request_rate"`
		MaxConcurrency *int            `json:"max_concurrency"`
	}
	b, _ := json.Marshal(top)
	_ = json.Unmarshal(b, &head)
	ic := results.InputConfig{
		Endpoint: &results.EndpointConfig{ModelNames: []string{head.ModelID}, Streaming: true},
		Loadgen:  &results.LoadgenConfig{RequestCount: head.NumPrompts},
	}
	if v, err := strconv.ParseFloat(string(head.RequestRate), 64); err == nil && finite(v) {
		ic.Loadgen.RequestRate = v
	}
	if head.MaxConcurrency != nil {
		ic.Loadgen.Concurrency = *head.MaxConcurrency
	}
	ic.Workload = workloadInfo(wl)
	return encodeInputConfig(ic, FormatVLLMBench)
}

// present adds run-level metric tag from member k when the file has it.
func (b *profile) present(nums map[string]float64, tag, k string) bool {
	v, ok := nums[k]
	if ok {
		b.scalar(tag, v)
	}
	return ok
}

// sorted returns the profile with its metrics in AIPerf's order.
func (b *profile) sorted() *results.Profile {
	rank := map[string]int{}
	for i, d := range results.Defs() {
		rank[d.Tag] = i
	}
	slices.SortStableFunc(b.p.Metrics, func(x, y results.MetricResult) int { return cmp.Compare(rank[x.Tag], rank[y.Tag]) })
	return b.p
}

// requestLists are the per-request lists of `vllm bench serve
// --save-detailed` (and of benchmark_serving.py before it, and of SGLang's
// bench_serving --output-details, adapted from it): one entry per request
// sent, failed ones included; times in seconds.
type requestLists struct {
	InputLens  []float64   `json:"input_lens"`
	OutputLens []float64   `json:"output_lens"`
	TTFTs      []float64   `json:"ttfts"`
	ITLs       [][]float64 `json:"itls"`
	Errors     []string    `json:"errors"`
	StartTimes []float64   `json:"start_times"`
}

// readLists decodes the per-request lists when the result has them (nil
// when it has no ttfts and itls); decode decodes the result, with errors
// naming its file, line and field.
func readLists(name string, top map[string]json.RawMessage, decode func(any) error) (*requestLists, error) {
	if !isList(top["ttfts"]) || !isList(top["itls"]) {
		return nil, nil
	}
	var l requestLists
	if err := decode(&l); err != nil {
		return nil, err
	}
	n := len(l.TTFTs)
	for _, f := range []struct {
		name string
		len  int
	}{{"itls", len(l.ITLs)}, {"input_lens", len(l.InputLens)}, {"output_lens", len(l.OutputLens)}, {"errors", len(l.Errors)}} {
		if _, ok := top[f.name]; !ok {
			return nil, missing(name, f.name)
		}
		if f.len != n {
			return nil, fmt.Errorf("%s: field %q: %d entries, but ttfts has %d", name, f.name, f.len, n)
		}
	}
	if _, ok := top["start_times"]; ok && len(l.StartTimes) != n {
		return nil, fmt.Errorf("%s: field %q: %d entries, but ttfts has %d", name, "start_times", len(l.StartTimes), n)
	}
	return &l, nil
}

func isList(raw json.RawMessage) bool {
	s := bytes.TrimSpace(raw)
	return len(s) > 0 && s[0] == '['
}

// requestValues are AIPerf's per-request metrics of the lists, in ms and
// tokens, and the run's totals.
type requestValues struct {
	latency, ttft, ttst, itl, otpu, prefill, isl, osl, icl, errISL []float64

	valid, failed, noContent int
	totalISL, totalOSL       float64
	start, end               float64 // s, over valid requests with start_times
}

// perRequest applies AIPerf's definitions to each request of l. A request
// failed when its error is not empty, and also (as AIPerf's
// InvalidInferenceResultError) when it received no content: ttft 0 and no
// gaps, which the tools count as completed. chunkGaps says whether itls
// holds one gap per content chunk (inter_chunk_latency and
// time_to_second_token are then read from it).
func perRequest(l *requestLists, chunkGaps bool) requestValues {
	v := requestValues{start: math.Inf(1), end: math.Inf(-1)}
	for i, ttftS := range l.TTFTs {
		switch {
		case l.Errors[i] != "":
			v.failed++
			v.errISL = append(v.errISL, l.InputLens[i])
		case ttftS <= 0 && len(l.ITLs[i]) == 0:
			v.failed++
			v.noContent++
			v.errISL = append(v.errISL, l.InputLens[i])
		default:
			v.add(l, i, chunkGaps)
		}
	}
	return v
}

// add adds successful request i.
func (v *requestValues) add(l *requestLists, i int, chunkGaps bool) {
	gaps := l.ITLs[i]
	lastS := l.TTFTs[i]
	for _, g := range gaps {
		lastS += g
	}
	ttft, latency := l.TTFTs[i]*1000, lastS*1000
	isl, osl := l.InputLens[i], l.OutputLens[i]
	v.valid++
	v.totalISL += isl
	v.totalOSL += osl
	v.latency = append(v.latency, latency)
	v.ttft = append(v.ttft, ttft)
	v.isl = append(v.isl, isl)
	v.osl = append(v.osl, osl)
	appendDerived(latency, ttft, isl, osl, &v.itl, &v.otpu, &v.prefill)
	if chunkGaps && len(gaps) > 0 && !slices.ContainsFunc(gaps, func(g float64) bool { return g < 0 }) {
		v.ttst = append(v.ttst, gaps[0]*1000)
		for _, g := range gaps {
			v.icl = append(v.icl, g*1000)
		}
	}
	if l.StartTimes != nil {
		v.start = min(v.start, l.StartTimes[i])
		v.end = max(v.end, l.StartTimes[i]+lastS)
	}
}

// listProfile computes the run's AIPerf metrics from its per-request
// lists; of the file's aggregates only the duration is read (when the
// lists have no start_times), and the file's latency mean is compared.
func (r *Run) listProfile(p *profile, l *requestLists, nums map[string]float64, shape benchShape) {
	v := perRequest(l, shape.chunkITL)
	r.warn("the per-request lists are read: every distribution is computed from them with AIPerf's definitions (request_latency = ttft + the request's itls, to its last content chunk; inter_token_latency = (request_latency − ttft)/(OSL − 1)), over the %d requests without an error; the file's statistics are not read", v.valid)
	if v.noContent > 0 {
		r.warn("%d request(s) have no error but received no content (ttft 0, no itls): counted as failed, as AIPerf does, where the tool counted them as completed (its ttft statistics include their 0)", v.noContent)
	}
	for _, d := range []struct {
		tag    string
		values []float64
	}{
		{results.TagRequestLatency, v.latency}, {results.TagTTFT, v.ttft}, {results.TagTTST, v.ttst},
		{results.TagITL, v.itl}, {results.TagOTPU, v.otpu}, {results.TagOSL, v.osl}, {results.TagISL, v.isl},
		{results.TagICL, v.icl}, {results.TagErrorISL, v.errISL}, {results.TagPrefillPerUser, v.prefill},
	} {
		if s, ok := results.Summarize(d.values); ok {
			p.dist(d.tag, s.Stats(), 1)
		}
	}
	if v.noContent == 0 {
		r.compareLatency(nums, shape, v.latency)
	}
	p.scalar(results.TagRequestCount, float64(v.valid))
	if v.failed > 0 {
		p.scalar(results.TagErrorRequestCount, float64(v.failed))
		p.scalar(results.TagTotalErrorISL, fsum(v.errISL))
	}
	if v.valid == 0 {
		return
	}
	p.scalar(results.TagTotalISL, v.totalISL)
	p.scalar(results.TagTotalOSL, v.totalOSL)
	p.scalar(results.TagTotalOutputTokens, v.totalOSL)
	r.listThroughputs(p, v, nums)
}

// listThroughputs adds the duration and the throughputs: AIPerf's duration
// (first start to last response of the valid requests) when the lists
// have start_times, else the file's.
func (r *Run) listThroughputs(p *profile, v requestValues, nums map[string]float64) {
	dur, ok := v.end-v.start, v.end > v.start
	if ok {
		r.warn("benchmark_duration is AIPerf's, from start_times: the first request's start to the last successful request's last content chunk (%.6g s; the file's duration, %.6g s, is the tool's whole run)", dur, nums["duration"])
	} else if dur, ok = nums["duration"]; ok && dur > 0 {
		r.warn("the lists have no start times: benchmark_duration is the file's, and the throughputs are the lists' totals over it")
	} else {
		return
	}
	p.scalar(results.TagBenchmarkDuration, dur)
	p.scalar(results.TagRequestThroughput, float64(v.valid)/dur)
	p.scalar(results.TagOutputThroughput, v.totalOSL/dur)
	p.scalar(results.TagTotalThroughput, (v.totalISL+v.totalOSL)/dur)
}

// compareLatency warns when the tool's own mean latency differs from
// AIPerf's computed from the lists by more than a microsecond.
func (r *Run) compareLatency(nums map[string]float64, shape benchShape, latency []float64) {
	mean, ok := nums["mean_"+shape.latency+"_ms"]
	if !ok || len(latency) == 0 {
		return
	}
	ours := fsum(slices.Clone(latency)) / float64(len(latency))
	if math.Abs(ours-mean) > 1e-3 {
		r.warn("request_latency from the lists averages %.6g ms, the file's mean_%s_ms %.6g ms: the tool's latency ends at the end of the stream, not at the last content chunk, or counts requests AIPerf does not", ours, shape.latency, mean)
	}
}

// fsum is numpy's sum of values (results.Summarize's).
func fsum(values []float64) float64 {
	s, _ := results.Summarize(slices.Clone(values))
	return s.Sum
}
