package peerruns

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/simbench/simbench/results"
)

// gl01File is guidellm 0.1's GuidanceReport: a list of reports, each with
// the arguments it ran with and its benchmarks. A file's benchmark_N counts
// the benchmarks of all its reports in order.
type gl01File struct {
	Benchmarks []gl01Report `json:"benchmarks"`
}

type gl01Report struct {
	Args struct {
		Model *string `json:"model"`
	} `json:"args"`
	Benchmarks []gl01Benchmark `json:"benchmarks"`
}

// gl01Benchmark is one run: its mode (synchronous, throughput, constant,
// poisson), its rate, and the results of its successful and failed
// requests; guidellm 0.1 writes no aggregates.
type gl01Benchmark struct {
	Mode    string            `json:"mode"`
	Rate    *float64          `json:"rate"`
	Results []gl01Result      `json:"results"`
	Errors  []json.RawMessage `json:"errors"`
}

// gl01Result is one request. Times are in seconds: start_time and end_time
// are epoch times, the request's send and the arrival of the stream's chunk
// carrying finish_reason; first_token_time is the wait for the first
// streamed chunk; decode_times.data holds the gaps between the next chunks
// but the last, whose own arrival is last_time. output_token_count counts
// the chunks before the one carrying finish_reason; prompt_token_count is
// the request's own count or, when it has none, the prompt's word count.
type gl01Result struct {
	Request struct {
		PromptTokens *int `json:"prompt_token_count"`
	} `json:"request"`
	PromptTokens   *int     `json:"prompt_token_count"`
	OutputTokens   *int     `json:"output_token_count"`
	StartTime      *float64 `json:"start_time"`
	EndTime        *float64 `json:"end_time"`
	LastTime       *float64 `json:"last_time"`
	FirstTokenTime *float64 `json:"first_token_time"`
	DecodeTimes    struct {
		Data []float64 `json:"data"`
	} `json:"decode_times"`
}

const gl01Warning = "guidellm 0.1 writes per-request values only: every statistic is computed from them as AIPerf does " +
	"(numpy's linear percentiles, population std). It times streamed chunks, empty or not: time_to_first_token is its first " +
	"chunk, request_latency ends at the chunk carrying finish_reason, inter_chunk_latency is the gaps between its chunks, and " +
	"output_sequence_length is its output_token_count, the chunks before that last one. On vLLM's chat API (an empty role " +
	"chunk just before the first token; the last token with finish_reason) these are AIPerf's tokens and content chunks, " +
	"but for the role chunk's gap (under 1 ms) in time_to_first_token and inter_chunk_latency"

// openGuideLLM01 reads a benchmark of guidellm 0.1.
func openGuideLLM01(path string, b []byte, index int) (*Run, error) {
	var f gl01File
	if err := decodeJSON(path, b, &f); err != nil {
		return nil, err
	}
	refs := gl01Refs(&f)
	index, err := glPick(path, index, len(refs))
	if err != nil {
		return nil, err
	}
	ref := refs[index]
	report := &f.Benchmarks[ref[0]]
	bm := &report.Benchmarks[ref[1]]
	where := fmt.Sprintf("%s: benchmarks[%d].benchmarks[%d]", path, ref[0], ref[1])
	v, err := gl01Collect(where, bm.Results)
	if err != nil {
		return nil, err
	}
	run := newGuideLLMRun(path, index)
	v.warn(run)
	if run.Profile, err = v.profile(len(bm.Errors)); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	run.Profile.InputConfig, err = guideLLMInputConfig(firstModel(report.Args.Model), glStrategy{Type: bm.Mode, Rate: bm.Rate}, nil)
	return run, err
}

// warn adds the run's warnings: the definitions, and the results read
// otherwise than as AIPerf would.
func (v *gl01Values) warn(run *Run) {
	run.warn("%s", gl01Warning)
	if v.noChunk > 0 {
		run.warn("%d results streamed no chunk (first_token_time null): counted as failed requests, as AIPerf counts a response without content", v.noChunk)
	}
	if v.wordISL > 0 {
		run.warn("%d results' requests have no prompt_token_count: guidellm 0.1 wrote their prompt's word count instead, read as their input_sequence_length", v.wordISL)
	}
}

// gl01Refs lists the file's benchmarks in order as (report, benchmark)
// indexes.
func gl01Refs(f *gl01File) [][2]int {
	var refs [][2]int
	for r := range f.Benchmarks {
		for b := range f.Benchmarks[r].Benchmarks {
			refs = append(refs, [2]int{r, b})
		}
	}
	return refs
}

// gl01Values are a benchmark's per-request values in AIPerf's display
// units (ms and tokens), over the requests that streamed a chunk.
type gl01Values struct {
	latency, ttft, itl, icl, osl, isl []float64
	minStart, maxEnd                  float64 // epoch seconds
	noChunk                           int     // results without a first chunk
	wordISL                           int     // results whose prompt_token_count is a word count
}

// gl01Collect gathers the values of results; every result needs its
// start_time, end_time and token counts, and one with a first chunk its
// last_time.
func gl01Collect(where string, rs []gl01Result) (*gl01Values, error) {
	v := &gl01Values{minStart: math.Inf(1), maxEnd: math.Inf(-1)}
	for i := range rs {
		if f := rs[i].missingField(); f != "" {
			return nil, missing(where, fmt.Sprintf("results[%d].%s", i, f))
		}
		v.add(&rs[i])
	}
	return v, nil
}

// missingField names the first field r lacks ("" for none).
func (r *gl01Result) missingField() string {
	switch {
	case r.StartTime == nil:
		return "start_time"
	case r.EndTime == nil:
		return "end_time"
	case r.PromptTokens == nil:
		return "prompt_token_count"
	case r.OutputTokens == nil:
		return "output_token_count"
	case r.FirstTokenTime != nil && r.LastTime == nil:
		return "last_time"
	}
	return ""
}

// add adds one complete result (see missingField).
func (v *gl01Values) add(r *gl01Result) {
	if r.FirstTokenTime == nil {
		v.noChunk++
		return
	}
	start, end, osl := *r.StartTime, *r.EndTime, float64(*r.OutputTokens)
	latency, ttft := (end-start)*1000, *r.FirstTokenTime*1000
	v.latency = append(v.latency, latency)
	v.ttft = append(v.ttft, ttft)
	appendDerived(latency, ttft, float64(*r.PromptTokens), osl, &v.itl, nil, nil)
	for _, d := range r.DecodeTimes.Data {
		v.icl = append(v.icl, d*1000)
	}
	v.icl = append(v.icl, (end-*r.LastTime)*1000)
	v.osl = append(v.osl, osl)
	v.isl = append(v.isl, float64(*r.PromptTokens))
	if r.Request.PromptTokens == nil {
		v.wordISL++
	}
	v.minStart, v.maxEnd = min(v.minStart, start), max(v.maxEnd, end)
}

// summaries computes the statistics of each per-request metric with
// AIPerf's definitions (results.Summarize); a metric without values is
// absent.
func (v *gl01Values) summaries() map[string]results.Summary {
	out := map[string]results.Summary{}
	for tag, values := range map[string][]float64{results.TagRequestLatency: v.latency, results.TagTTFT: v.ttft,
		results.TagITL: v.itl, results.TagOSL: v.osl, results.TagISL: v.isl, results.TagICL: v.icl} {
		if s, ok := results.Summarize(values); ok {
			out[tag] = s
		}
	}
	return out
}

// profile computes AIPerf's metrics from the values and the count of
// failed requests (guidellm's errors). benchmark_duration is AIPerf's:
// the first successful request's start to the last one's end.
func (v *gl01Values) profile(errored int) (*results.Profile, error) {
	p := newProfile()
	if err := v.fill(p, errored); err != nil {
		return nil, err
	}
	return p.p, nil
}

// fill adds the metrics of profile to p.
func (v *gl01Values) fill(p *profile, errored int) error {
	n := float64(len(v.latency))
	if n == 0 {
		return fmt.Errorf("no request streamed a chunk")
	}
	dur := v.maxEnd - v.minStart
	if !(dur > 0) {
		return fmt.Errorf("its requests span no time (first start_time %v, last end_time %v)", v.minStart, v.maxEnd)
	}
	s := v.summaries()
	isl, osl := s[results.TagISL].Sum, s[results.TagOSL].Sum
	p.scalar(results.TagRequestThroughput, n/dur)
	p.summary(s, results.TagRequestLatency)
	p.scalar(results.TagRequestCount, n)
	p.summary(s, results.TagTTFT)
	p.summary(s, results.TagITL)
	p.scalar(results.TagOutputThroughput, osl/dur)
	p.summary(s, results.TagOSL)
	p.summary(s, results.TagISL)
	p.summary(s, results.TagICL)
	p.scalar(results.TagTotalOutputTokens, osl)
	p.scalar(results.TagBenchmarkDuration, dur)
	p.scalar(results.TagTotalISL, isl)
	p.scalar(results.TagTotalOSL, osl)
	if e := errored + v.noChunk; e > 0 {
		p.scalar(results.TagErrorRequestCount, float64(e))
	}
	p.scalar(results.TagTotalThroughput, (isl+osl)/dur)
	return nil
}

// summary adds record metric tag from its statistics in s, if any.
func (b *profile) summary(s map[string]results.Summary, tag string) {
	if sm, ok := s[tag]; ok {
		b.dist(tag, sm.Stats(), 1)
	}
}
