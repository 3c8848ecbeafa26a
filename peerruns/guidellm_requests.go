package peerruns

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/simbench/simbench/results"
)

// glRequests are a benchmark's per-request lists (guidellm 0.4 and
// later): every request it ran, the warm-up and cool-down ones included,
// or a reservoir sample of them (sample_requests). Files may have them
// emptied. Incomplete (cancelled) requests are not read, as in the
// aggregates.
type glRequests struct {
	Successful []glRequest `json:"successful"`
	Errored    []glRequest `json:"errored"`
}

// glRequest is one request's stats (type_ "generative_request_stats").
// Times are epoch seconds. request_start_time and request_end_time are
// those guidellm selects requests by: info.timings' request_start and
// request_end, or the worker's resolve_start and resolve_end without them.
// first_token_iteration and last_token_iteration are the arrivals of the
// first and the last streamed line carrying tokens. prompt_tokens and
// output_tokens are guidellm's counts (the server's usage when reported),
// also nested as input_metrics.total_tokens and
// output_metrics.total_tokens.
type glRequest struct {
	RequestStartTime *float64 `json:"request_start_time"`
	RequestEndTime   *float64 `json:"request_end_time"`
	PromptTokens     *float64 `json:"prompt_tokens"`
	OutputTokens     *float64 `json:"output_tokens"`
	Info             struct {
		Timings glTimings `json:"timings"`
	} `json:"info"`
	InputMetrics  glUsage `json:"input_metrics"`
	OutputMetrics glUsage `json:"output_metrics"`
}

type glTimings struct {
	ResolveStart *float64 `json:"resolve_start"`
	RequestStart *float64 `json:"request_start"`
	FirstToken   *float64 `json:"first_token_iteration"`
	LastToken    *float64 `json:"last_token_iteration"`
	RequestEnd   *float64 `json:"request_end"`
	ResolveEnd   *float64 `json:"resolve_end"`
}

type glUsage struct {
	TotalTokens *float64 `json:"total_tokens"`
}

// firstOf is the first value given (nil for none).
func firstOf(vs ...*float64) *float64 {
	for _, v := range vs {
		if v != nil {
			return v
		}
	}
	return nil
}

func (q *glRequest) start() *float64 {
	return firstOf(q.RequestStartTime, q.Info.Timings.RequestStart, q.Info.Timings.ResolveStart)
}

func (q *glRequest) end() *float64 {
	return firstOf(q.RequestEndTime, q.Info.Timings.RequestEnd, q.Info.Timings.ResolveEnd)
}

func (q *glRequest) prompt() *float64 { return firstOf(q.PromptTokens, q.InputMetrics.TotalTokens) }

func (q *glRequest) output() *float64 { return firstOf(q.OutputTokens, q.OutputMetrics.TotalTokens) }

// inWindow reports whether guidellm's metrics count q in the measurement
// window from … to: it ends at or after from and starts at or before to
// (without a start, ends by to), as guidellm's get_within_range (0.4 to
// 0.8). missingField names the field q lacks ("" for none).
func (q *glRequest) inWindow(from, to float64) (in bool, missingField string) {
	end, start := q.end(), q.start()
	switch {
	case end == nil:
		return false, "request_end_time"
	case start == nil:
		return *end >= from && *end <= to, ""
	}
	return *end >= from && *start <= to, ""
}

// window is the benchmark's measurement window, epoch seconds: its
// start_time and end_time (scheduler_metrics' measure_start_time and
// measure_end_time: the warm-up's end and the cool-down's start).
func (bm *glBenchmark) window() (from, to float64, ok bool) {
	f := firstOf(bm.StartTime, bm.SchedulerMetrics.MeasureStartTime)
	t := firstOf(bm.EndTime, bm.SchedulerMetrics.MeasureEndTime)
	if f == nil || t == nil || !(*t >= *f) {
		return 0, 0, false
	}
	return *f, *t, true
}

// glSelect lists the indexes of the requests of requests.<list> in the
// window.
func glSelect(where, list string, rs []glRequest, from, to float64) ([]int, error) {
	var out []int
	for i := range rs {
		in, field := rs[i].inWindow(from, to)
		if field != "" {
			return nil, missing(where, fmt.Sprintf("requests.%s[%d].%s", list, i, field))
		}
		if in {
			out = append(out, i)
		}
	}
	return out, nil
}

// glSelection are the requests guidellm's metrics count: indexes into the
// successful and errored lists.
type glSelection struct {
	successful, errored []int
}

// glSelection selects the requests in the benchmark's measurement window;
// false (with a warning) when the file has no window or the selection is
// not what its request totals count (sampled or edited lists).
func (r *Run) glSelection(s *glSummary, bm *glBenchmark) (*glSelection, bool, error) {
	from, to, ok := bm.window()
	if !ok {
		r.warn("the per-request lists are not read: the benchmark has no measurement window (start_time, end_time) to select the requests its metrics count")
		return nil, false, nil
	}
	totals, err := glTotals(s.where, s.totalsField, s.totals)
	if err != nil {
		return nil, false, err
	}
	var sel glSelection
	if sel.successful, err = glSelect(s.where, "successful", bm.Requests.Successful, from, to); err != nil {
		return nil, false, err
	}
	if sel.errored, err = glSelect(s.where, "errored", bm.Requests.Errored, from, to); err != nil {
		return nil, false, err
	}
	if float64(len(sel.successful)) != totals["successful"] || float64(len(sel.errored)) != totals["errored"] {
		r.warn("the per-request lists are not read: of their %d successful and %d errored requests, %d and %d overlap the measurement window, "+
			"where %s counts %g and %g (the lists are a sample, sample_requests, or were edited)",
			len(bm.Requests.Successful), len(bm.Requests.Errored), len(sel.successful), len(sel.errored),
			s.totalsField, totals["successful"], totals["errored"])
		return nil, false, nil
	}
	return &sel, true, nil
}

// glListValues are the values of the selected successful requests:
// gl01Values' metrics and the per-user throughputs, and the requests that
// streamed a token (for the workload).
type glListValues struct {
	gl01Values
	otpu, prefill []float64
	sent          []*glRequest
}

// glListCollect gathers the values of requests idx of rs
// (requests.successful).
func glListCollect(where string, rs []glRequest, idx []int) (*glListValues, error) {
	v := &glListValues{gl01Values: gl01Values{minStart: math.Inf(1), maxEnd: math.Inf(-1)}}
	for _, i := range idx {
		if field := v.add(&rs[i]); field != "" {
			return nil, missing(where, fmt.Sprintf("requests.successful[%d].%s", i, field))
		}
	}
	return v, nil
}

// add adds one request with AIPerf's definitions, in ms and tokens;
// missingField names a field it needs and lacks ("" for none). A request
// without a token is a failed one.
func (v *glListValues) add(q *glRequest) (missingField string) {
	t := &q.Info.Timings
	switch {
	case t.FirstToken == nil:
		v.noChunk++
		return ""
	case t.RequestStart == nil:
		return "info.timings.request_start"
	case t.LastToken == nil:
		return "info.timings.last_token_iteration"
	case q.prompt() == nil:
		return "prompt_tokens"
	case q.output() == nil:
		return "output_tokens"
	}
	start := *t.RequestStart
	latency, ttft := (*t.LastToken-start)*1000, (*t.FirstToken-start)*1000
	isl, osl := *q.prompt(), *q.output()
	v.latency = append(v.latency, latency)
	v.ttft = append(v.ttft, ttft)
	appendDerived(latency, ttft, isl, osl, &v.itl, &v.otpu, &v.prefill)
	v.osl = append(v.osl, osl)
	v.isl = append(v.isl, isl)
	v.minStart, v.maxEnd = min(v.minStart, start), max(v.maxEnd, *t.LastToken)
	v.sent = append(v.sent, q)
	return ""
}

// glListProfile sets the run's profile, workload and input config from
// the benchmark's per-request lists; false when the lists are empty or do
// not hold the requests guidellm's metrics count (its aggregates are to be
// read then).
func (r *Run) glListProfile(path string, s *glSummary, bm *glBenchmark) (bool, error) {
	if len(bm.Requests.Successful) == 0 {
		return false, nil
	}
	sel, ok, err := r.glSelection(s, bm)
	if err != nil || !ok {
		return false, err
	}
	v, err := glListCollect(s.where, bm.Requests.Successful, sel.successful)
	if err != nil {
		return false, err
	}
	if len(v.latency) == 0 {
		r.warn("the per-request lists are not read: none of the %d successful requests the metrics count streamed a token", len(sel.successful))
		return false, nil
	}
	p := newProfile()
	if err := v.fill(p, len(sel.errored)); err != nil {
		return false, fmt.Errorf("%s: %w", s.where, err)
	}
	v.perUser(p)
	r.Profile = p.sorted()
	leftOut := len(bm.Requests.Successful) - len(sel.successful)
	if err := r.glListWarnings(s, v, leftOut, len(sel.successful)); err != nil {
		return false, err
	}
	r.glWorkload(path, v, s.strategy, leftOut)
	r.Profile.InputConfig, err = guideLLMInputConfig(s.model, s.strategy, r.Workload)
	return true, err
}

// perUser adds the per-user throughputs.
func (v *glListValues) perUser(p *profile) {
	for _, m := range []struct {
		tag    string
		values []float64
	}{{results.TagOTPU, v.otpu}, {results.TagPrefillPerUser, v.prefill}} {
		if sm, ok := results.Summarize(m.values); ok {
			p.dist(m.tag, sm.Stats(), 1)
		}
	}
}

// glListWarnings says how the lists were read, and compares the mean TTFT
// with the file's.
func (r *Run) glListWarnings(s *glSummary, v *glListValues, leftOut, counted int) error {
	r.warn("the per-request lists are read: every statistic is computed from them with AIPerf's definitions (numpy's linear percentiles, "+
		"population std) over the %d successful requests guidellm's metrics count, those that overlap its measurement window "+
		"(start_time … end_time: ending at or after its start and starting at or before its end, as guidellm selects them)%s. "+
		"time_to_first_token = first_token_iteration − request_start; "+
		"request_latency = last_token_iteration − request_start, to the last streamed line carrying tokens (guidellm's "+
		"request_latency ends at request_end, when the stream closed); inter_token_latency = (request_latency − "+
		"time_to_first_token)/(OSL − 1), guidellm's per-request inter_token_latency_ms (its summary weights each request "+
		"by OSL − 1); OSL and ISL are its output_tokens and prompt_tokens. The lists record no chunk times: inter_chunk_latency "+
		"and time_to_second_token are not computed", counted, leftOutNote(leftOut))
	dur := v.maxEnd - v.minStart
	r.warn("benchmark_duration is AIPerf's: the first request's start to the last one's last token (%.6g s; guidellm's duration, "+
		"its measurement window, is %.6g s); the throughputs divide by it", dur, ptrValue(s.duration))
	if v.noChunk > 0 {
		r.warn("%d successful request(s) streamed no token (no first_token_iteration): counted as failed, as AIPerf counts a response without content", v.noChunk)
		return nil
	}
	return r.compareTTFT(s, v.ttft)
}

// leftOutNote says how many listed requests the window leaves out.
func leftOutNote(n int) string {
	if n == 0 {
		return ", all those listed"
	}
	return fmt.Sprintf("; %d listed outside it (warm-up, cool-down) are left out", n)
}

// compareTTFT warns when the mean TTFT of the requests selected differs
// from the file's by more than a microsecond (they are then not the
// requests guidellm counted).
func (r *Run) compareTTFT(s *glSummary, ttft []float64) error {
	d, err := glSuccessful(s.where, s.metrics, "time_to_first_token_ms")
	if err != nil || d.Mean == nil {
		return err
	}
	ours := fsum(ttft) / float64(len(ttft))
	if math.Abs(ours-*d.Mean) > 1e-3 {
		r.warn("time_to_first_token from the lists averages %.9g ms, the file's metrics %.9g ms: the requests selected may not be those guidellm counted", ours, *d.Mean)
	}
	return nil
}

// glWorkload rebuilds the requests the profile is computed from, for
// `calibrate --real`: each with its prompt and output token counts, sent
// at its recorded request_start under the strategy's concurrency cap.
func (r *Run) glWorkload(path string, v *glListValues, st glStrategy, leftOut int) {
	sent := slices.Clone(v.sent)
	slices.SortStableFunc(sent, func(a, b *glRequest) int {
		return cmp.Compare(*a.Info.Timings.RequestStart, *b.Info.Timings.RequestStart)
	})
	n := len(sent)
	l := &requestLists{ITLs: make([][]float64, n), Errors: make([]string, n)}
	for _, q := range sent {
		t := &q.Info.Timings
		l.InputLens = append(l.InputLens, *q.prompt())
		l.OutputLens = append(l.OutputLens, *q.output())
		l.TTFTs = append(l.TTFTs, *t.FirstToken-*t.RequestStart)
		l.StartTimes = append(l.StartTimes, *t.RequestStart)
	}
	r.listWorkload("guidellm's", path, l, benchLoad{cap: st.concurrency()})
	if r.Workload == nil {
		return
	}
	r.note("guidellm lists the requests as they completed: the workload orders them by request_start")
	if leftOut > 0 {
		r.note("the %d request(s) listed outside the measurement window (warm-up, cool-down) are left out, as guidellm's metrics leave them out; "+
			"with more than one request in flight, the measured requests at the window's edges overlapped them", leftOut)
	}
}
