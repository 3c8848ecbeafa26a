package loadgen

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/simbench/simbench/internal/warning"
	"github.com/simbench/simbench/pacer"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// LateThresholdMs is perf_analyzer's tolerance: a send more than 1 ms after
// its intended time is late, and more than LateShareWarn of late sends means
// the client fell behind.
const (
	LateThresholdMs = 1.0
	LateShareWarn   = 0.01
	RateShortfall   = 0.005 // achieved rate more than 0.5 % below requested
)

// Report is what a run measured about itself, beyond its records: how well
// it kept the schedule and how close the prompts came to their intended
// length. Warmup requests are left out of everything but Warmup.
type Report struct {
	StartNs, EndNs int64
	Interrupted    bool // the run was cancelled (an interrupt)
	OpenLoop       bool // the profiling schedule had timestamps
	Warmup         int  // warmup requests sent
	Sent           int  // profiling requests sent
	Finished       int
	Errors         int // error records, cancellations included
	Cancelled      int
	// NoDone counts successes whose stream ended after a finish_reason but
	// without data: [DONE] (without a finish_reason they are errors).
	NoDone int
	// Streaming says the requests asked for a stream; NotStreamed counts
	// the successes answered with one JSON body instead (no TTFT or ITL).
	Streaming   bool
	NotStreamed int
	HeldByCap   int // sends the concurrency cap held past their intended time
	// Reasons counts the successes by a finish_reason other than stop and
	// length (abort, error, …); OSLMismatch those whose OSL is off the
	// requested max tokens by AIPerf's osl_mismatch rule; UsageFar those
	// whose server usage.completion_tokens is far from the client's count.
	Reasons              map[string]int
	OSLMismatch          int
	oslDiffLo, oslDiffHi float64 // osl_mismatch_diff_pct range over OSLMismatch
	UsageFar             int
	// UsageInvalid counts the successes whose usage was invalid (their
	// counts are the client's); firstBadUsage says what the first one sent
	// was (requests finish and are accounted out of send order).
	UsageInvalid                   int
	firstBadUsage                  string
	firstBadUsageNs                int64
	usageFarServer, usageFarClient int   // the first such response sent
	firstUsageFarNs                int64 // its start
	// ImplausibleUsage counts successes whose server usage claimed more completion
	// tokens than the answer could have (finish): their client counts are
	// kept.
	ImplausibleUsage int
	// Spin is the time the pacing loop busy-waited before deadlines (the
	// CPU cost of sub-millisecond precision).
	Spin time.Duration
	// StartLate is how long after Config.StartAt the run was ready to send
	// (0 when on time or without a StartAt).
	StartLate time.Duration
	// Counting says how tokens were counted (Endpoint.Counting); ExactISL
	// is set when synthesised prompts have exactly their intended length
	// (a tokenizer, or token-id prompts).
	Counting string
	ExactISL bool
	// Heuristic is set when the output counts are the word heuristic's (no
	// tokenizer, no --use-server-token-count); usageOut and heuristicOut
	// sum the server's usage.completion_tokens and the heuristic's count
	// over the successes that have both (a plausible usage).
	Heuristic              bool
	usageOut, heuristicOut int

	dispatchMs                  []float64 // driver hand-off time − deadline (profiling sends)
	firstIntended, lastIntended int64
	firstStart, lastStart       int64
	lagsMs                      []float64 // send_lag of successful requests (results' definition)
	islIntended, islServer      float64
	islPairs                    int
}

func newReport(wl *traces.Workload) *Report {
	rep := &Report{}
	for i := range wl.Requests {
		if !wl.Requests[i].Warmup && wl.Requests[i].HasTimestamp {
			rep.OpenLoop = true
			break
		}
	}
	return rep
}

func (rep *Report) noteSend(s pacer.Send, lateBy time.Duration) {
	if s.Warmup {
		rep.Warmup++
		return
	}
	rep.Sent++
	rep.dispatchMs = append(rep.dispatchMs, float64(lateBy)/1e6)
	if s.At > s.Intended {
		rep.HeldByCap++
	}
}

// add accounts one finished request with its metrics.
func (rep *Report) add(j job, m *results.RecordMetrics) {
	rec := j.rec
	if rec.Warmup {
		return
	}
	rep.Finished++
	if m.Error != nil { // the aggregate's rule: a stream without content failed too
		rep.Errors++
	}
	if rec.Cancelled {
		rep.Cancelled++
	}
	if j.noDone {
		rep.NoDone++
	}
	if rep.Streaming && rec.NonStreaming && rec.Error == nil {
		rep.NotStreamed++
	}
	if rec.Error == nil {
		rep.checkAnswer(j)
	}
	if rec.Error == nil && j.badUsage != "" {
		if rep.UsageInvalid == 0 || rec.StartNs < rep.firstBadUsageNs {
			rep.firstBadUsage, rep.firstBadUsageNs = j.badUsage, rec.StartNs
		}
		rep.UsageInvalid++
	}
	if j.implausibleUsage {
		rep.ImplausibleUsage++
	}
	rep.firstIntended, rep.lastIntended = span(rep.firstIntended, rep.lastIntended, rec.IntendedNs)
	rep.firstStart, rep.lastStart = span(rep.firstStart, rep.lastStart, rec.StartNs)
	if lag, ok := m.Get(results.TagSendLag); ok {
		rep.lagsMs = append(rep.lagsMs, lag)
	}
	if rec.Usage != nil && rec.Usage.PromptTokens > 0 && j.req.InputLength > 0 && m.Error == nil {
		rep.islIntended += float64(j.req.InputLength)
		rep.islServer += float64(rec.Usage.PromptTokens)
		rep.islPairs++
	}
}

// checkAnswer accounts what a success says about the answer: its
// finish_reason, its OSL against the max tokens asked for (AIPerf's
// osl_mismatch: |diff| > min(5 % of requested, 50 tokens)) and the server's
// usage against the client's count.
func (rep *Report) checkAnswer(j job) {
	rec := j.rec
	if j.reason != "" && j.reason != "stop" && j.reason != "length" {
		if rep.Reasons == nil {
			rep.Reasons = map[string]int{}
		}
		rep.Reasons[j.reason]++
	}
	if req := rec.RequestedOutputTokens; req > 0 {
		diff := float64(rec.OSL() - req)
		if math.Abs(diff) > min(0.05*float64(req), 50) {
			pct := diff / float64(req) * 100
			if rep.OSLMismatch == 0 || pct < rep.oslDiffLo {
				rep.oslDiffLo = pct
			}
			if rep.OSLMismatch == 0 || pct > rep.oslDiffHi {
				rep.oslDiffHi = pct
			}
			rep.OSLMismatch++
		}
	}
	if u := rec.Usage; j.usagePlausible && j.badUsage == "" && j.clientOSL > 0 && u.CompletionTokens > 0 {
		rep.usageOut += u.CompletionTokens
		rep.heuristicOut += j.clientOSL
	}
	if u := rec.Usage; u != nil && j.badUsage == "" && j.clientOSL > 0 && (u.CompletionTokens > 2*j.clientOSL || 2*u.CompletionTokens < j.clientOSL) {
		if rep.UsageFar == 0 || rec.StartNs < rep.firstUsageFarNs {
			rep.usageFarServer, rep.usageFarClient, rep.firstUsageFarNs = u.CompletionTokens, j.clientOSL, rec.StartNs
		}
		rep.UsageFar++
	}
}

func span(lo, hi, v int64) (int64, int64) {
	if v == 0 {
		return lo, hi
	}
	if lo == 0 || v < lo {
		lo = v
	}
	return lo, max(hi, v)
}

// RequestedRate is the schedule's rate over the requests sent (open loop
// only): (n−1)/(last − first intended time), in requests/s.
func (rep *Report) RequestedRate() (float64, bool) {
	return rate(rep.Finished, rep.firstIntended, rep.lastIntended, rep.OpenLoop)
}

// AchievedRate is the same over actual send times. After an interrupt it
// is the sends over the time the run lasted: the few sends before it may
// have left at once (a closed loop's first wave), and their span says
// nothing about the rate.
func (rep *Report) AchievedRate() (float64, bool) {
	if rep.Interrupted {
		secs := float64(rep.EndNs-rep.StartNs) / 1e9
		return float64(rep.Sent) / secs, rep.Sent > 0 && secs > 0
	}
	return rate(rep.Finished, rep.firstStart, rep.lastStart, true)
}

func rate(n int, first, last int64, ok bool) (float64, bool) {
	if !ok || n < 2 || last <= first {
		return 0, false
	}
	return float64(n-1) / (float64(last-first) / 1e9), true
}

// SendLag summarizes send_lag (ms) over the successful requests and counts
// the sends more than LateThresholdMs late.
func (rep *Report) SendLag() (s results.Summary, late int, ok bool) {
	for _, v := range rep.lagsMs {
		if v > LateThresholdMs {
			late++
		}
	}
	s, ok = results.Summarize(append([]float64(nil), rep.lagsMs...))
	return s, late, ok
}

// DispatchLag summarizes how late the pacing loop handed each send to a
// worker (ms after its deadline): the driver's own precision, before the
// worker is scheduled and stamps the send (send_lag includes both).
func (rep *Report) DispatchLag() (results.Summary, bool) {
	return results.Summarize(append([]float64(nil), rep.dispatchMs...))
}

// ISLError is the mean intended ISL, the mean server usage.prompt_tokens
// over the same requests, and their relative difference.
func (rep *Report) ISLError() (intended, server, pct float64, ok bool) {
	if rep.islPairs == 0 {
		return 0, 0, 0, false
	}
	n := float64(rep.islPairs)
	intended, server = rep.islIntended/n, rep.islServer/n
	return intended, server, (server - intended) / intended * 100, true
}

// Warnings are the run's self-checks that failed.
func (rep *Report) Warnings() []error {
	var out []error
	if rep.StartLate > 0 {
		out = append(out, fmt.Errorf("the run was ready %.1f ms after --start-at: its first sends were late by that much (counted in send_lag)",
			float64(rep.StartLate)/1e6))
	}
	if s, late, ok := rep.SendLag(); ok && float64(late) > LateShareWarn*float64(s.Count) {
		out = append(out, fmt.Errorf("the client fell behind the schedule: %.1f%% of sends were more than %g ms late (send lag p99 %.2f ms); "+
			"latencies from the intended send time are in the *_from_intended metrics", 100*float64(late)/float64(s.Count), LateThresholdMs, s.P[8]))
	}
	req, ok1 := rep.RequestedRate()
	got, ok2 := rep.AchievedRate()
	if ok1 && ok2 && !rep.Interrupted && got < req*(1-RateShortfall) {
		out = append(out, fmt.Errorf("achieved rate %.2f req/s is %.1f%% below the requested %.2f req/s", got, 100*(1-got/req), req))
	}
	if rep.NoDone > 0 {
		out = append(out, fmt.Errorf("%d of %d successful streams ended after a finish_reason but without data: [DONE]: "+
			"counted as successes (the server closed the stream early)", rep.NoDone, rep.Finished-rep.Errors))
	}
	if rep.NotStreamed > 0 {
		out = append(out, fmt.Errorf("%d of %d successful responses came as one JSON body although the request asked for a stream (\"stream\": true): "+
			"counted as successes without TTFT, ITL or token gaps (the server ignores \"stream\")", rep.NotStreamed, rep.Finished-rep.Errors))
	}
	out = append(out, rep.answerWarnings()...)
	if rep.ImplausibleUsage > 0 {
		out = append(out, fmt.Errorf("%d of %d successful requests reported a usage completion_tokens beyond both the max tokens asked "+
			"and the text streamed: the server's count was not used, the client's count kept", rep.ImplausibleUsage, rep.Finished-rep.Errors))
	}
	if rep.HeldByCap > 0 {
		out = append(out, fmt.Errorf("%d of %d sends waited for a free --concurrency slot past their intended time (counted in send_lag)", rep.HeldByCap, rep.Sent))
	}
	if rep.Interrupted {
		out = append(out, errors.New("the run was interrupted: requests in flight were cancelled (code 499) and later ones never sent"))
	}
	return out
}

// answerWarnings are checkAnswer's findings.
func (rep *Report) answerWarnings() []error {
	var out []error
	ok := rep.Finished - rep.Errors
	if len(rep.Reasons) > 0 {
		var parts []string
		n := 0
		for _, r := range slices.Sorted(maps.Keys(rep.Reasons)) {
			parts = append(parts, fmt.Sprintf("%s ×%d", r, rep.Reasons[r]))
			n += rep.Reasons[r]
		}
		out = append(out, fmt.Errorf("%d of %d successful responses ended with a finish_reason other than stop or length (%s): "+
			"counted as successes", n, ok, strings.Join(parts, ", ")))
	}
	if rep.OSLMismatch > 0 {
		out = append(out, fmt.Errorf("%d of %d successful responses have an OSL off the requested max tokens by more than min(5%%, 50 tokens) "+
			"(osl_mismatch_diff_pct %+.0f%% to %+.0f%%): the server stopped early or ignored the limit; "+
			"--extra-inputs ignore_eos:true (or min_tokens) holds it to the trace", rep.OSLMismatch, ok, rep.oslDiffLo, rep.oslDiffHi))
	}
	if rep.UsageInvalid > 0 {
		out = append(out, fmt.Errorf("%d of %d successful responses carried an invalid usage (first: %s): "+
			"their token counts are the client's", rep.UsageInvalid, ok, rep.firstBadUsage))
	}
	if rep.UsageFar > 0 {
		out = append(out, fmt.Errorf("%d of %d successful responses have a server usage.completion_tokens beyond twice or under half "+
			"the client's count of what was streamed (first: %d against %d)", rep.UsageFar, ok, rep.usageFarServer, rep.usageFarClient))
	}
	if off, ok := rep.HeuristicError(); ok && rep.Heuristic && math.Abs(off) > HeuristicDisagreement {
		out = append(out, fmt.Errorf("the word heuristic counted %d output tokens where the server's usage counts %d (%+.0f%%): "+
			"OSL, ITL and the token throughputs rest on the heuristic; --tokenizer PATH (the model's tokenizer.json or its directory) "+
			"counts as AIPerf does, --use-server-token-count takes the server's counts", rep.heuristicOut, rep.usageOut, 100*off))
	}
	return out
}

// HeuristicDisagreement is the share by which the word heuristic's output
// count may be off the server's usage before the run summary says so.
const HeuristicDisagreement = 0.2

// HeuristicError is the word heuristic's output count relative to the
// server's usage.completion_tokens, (heuristic − usage)/usage, over the
// successes that have both; false when none has.
func (rep *Report) HeuristicError() (float64, bool) {
	if rep.usageOut == 0 {
		return 0, false
	}
	return float64(rep.heuristicOut-rep.usageOut) / float64(rep.usageOut), true
}

// WriteSummary prints the schedule check, the ISL check, warnings and an
// AIPerf-like table of the main metrics of p.
func (rep *Report) WriteSummary(w io.Writer, p *results.Profile) error {
	var b strings.Builder
	rep.writeSchedule(&b)
	warning.Print(&b, rep.Warnings())
	b.WriteString("\n")
	if err := writeMetricTable(&b, p); err != nil {
		return err
	}
	writeSpecPositions(&b, p)
	writeErrorSummary(&b, p)
	_, err := io.WriteString(w, b.String())
	return err
}

func (rep *Report) writeSchedule(b *strings.Builder) {
	secs := float64(rep.EndNs-rep.StartNs) / 1e9
	fmt.Fprintf(b, "sent %d requests (+%d warmup) in %.2f s: %d ok, %d errors (%d cancelled)\n",
		rep.Sent, rep.Warmup, secs, rep.Finished-rep.Errors, rep.Errors, rep.Cancelled)
	got, okGot := rep.AchievedRate()
	if okGot && rep.Interrupted {
		fmt.Fprintf(b, "rate:      achieved %.2f req/s over the %.2f s until the interrupt\n", got, secs)
	} else if req, ok := rep.RequestedRate(); ok && okGot {
		fmt.Fprintf(b, "rate:      requested %.2f req/s, achieved %.2f req/s (%+.2f%%)\n", req, got, (got/req-1)*100)
	} else if okGot {
		fmt.Fprintf(b, "rate:      achieved %.2f req/s (closed loop: no requested rate)\n", got)
	}
	if s, late, ok := rep.SendLag(); ok {
		fmt.Fprintf(b, "send lag:  p50 %.3f ms, p99 %.3f ms, max %.3f ms; %.2f%% of sends > %g ms late (%d successful requests)\n",
			s.P[4], s.P[8], s.Max, 100*float64(late)/float64(s.Count), LateThresholdMs, s.Count)
	}
	if secs > 0 {
		fmt.Fprintf(b, "pacing:    %.1f ms of busy-wait before deadlines (%.2f%% of one core)\n",
			float64(rep.Spin)/1e6, 100*rep.Spin.Seconds()/secs)
	}
	if rep.Counting != "" {
		fmt.Fprintf(b, "tokens:    %s\n", rep.Counting)
	}
	if in, srv, pct, ok := rep.ISLError(); ok && rep.ExactISL {
		fmt.Fprintf(b, "ISL:       intended %.1f tokens avg (exact), server usage.prompt_tokens %.1f avg: %+.1f tokens per request added by the server (its chat template)\n", in, srv, srv-in)
	} else if ok {
		fmt.Fprintf(b, "ISL:       intended %.1f tokens avg (approximate), server usage.prompt_tokens %.1f avg (%+.2f%%, includes any chat template)\n", in, srv, pct)
	} else if rep.UsageInvalid > 0 {
		fmt.Fprintf(b, "ISL:       the server's usage was invalid (%s): prompt lengths unchecked\n", rep.firstBadUsage)
	} else if rep.Finished > rep.Errors {
		fmt.Fprintf(b, "ISL:       the server reported no usage (--use-server-token-count asks for it): prompt lengths unchecked\n")
	}
}

// summaryRows are the metrics of the end-of-run table, AIPerf's console
// order.
var summaryRows = []string{results.TagTTFT, results.TagTTST, results.TagITL, results.TagRequestLatency,
	results.TagOSL, results.TagISL, results.TagSendLag, results.TagTokensPerChunk}

var summaryScalars = []string{results.TagRequestThroughput, results.TagOutputThroughput,
	results.TagTotalThroughput, results.TagRequestCount, results.TagErrorRequestCount, results.TagBenchmarkDuration,
	results.TagGoodput, results.TagGoodRequestCount, results.TagAttainment, // these three with --goodput
	results.TagSpecAcceptanceRate, results.TagSpecMeanAcceptedLength} // these two when the server drafts

func writeMetricTable(b *strings.Builder, p *results.Profile) error {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "Metric\tavg\tmin\tmax\tp99\tp90\tp50\tstd\t")
	for _, tag := range summaryRows {
		m, ok := p.Metric(tag)
		if !ok {
			continue
		}
		fmt.Fprintf(tw, "%s (%s)\t", m.Header(), m.Unit)
		for _, stat := range []string{"avg", "min", "max", "p99", "p90", "p50", "std"} {
			fmt.Fprintf(tw, "%s\t", fmtStat(m.Stats[stat]))
		}
		fmt.Fprintln(tw)
	}
	for _, tag := range summaryScalars {
		if v, ok := p.Value(tag, "avg"); ok {
			m, _ := p.Metric(tag)
			fmt.Fprintf(tw, "%s (%s)\t%s\t\t\t\t\t\t\t\n", m.Header(), m.Unit, fmtStat(v))
		}
	}
	return tw.Flush()
}

// writeSpecPositions prints the acceptance at each draft position when the
// server's speculative decoding counters are in the aggregate.
func writeSpecPositions(b *strings.Builder, p *results.Profile) {
	s, ok := p.SpecDecode()
	if !ok || len(s.AcceptedPerPos) == 0 {
		return
	}
	rates := make([]string, 0, len(s.AcceptedPerPos))
	for _, r := range s.PositionRates() {
		rates = append(rates, fmt.Sprintf("%.3f", r))
	}
	fmt.Fprintf(b, "speculative decoding: %.0f drafts, acceptance by draft position %s\n", s.Drafts, strings.Join(rates, " "))
}

func fmtStat(v float64) string {
	switch a := math.Abs(v); {
	case v == math.Trunc(v) && a < 1e9:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func writeErrorSummary(b *strings.Builder, p *results.Profile) {
	for _, e := range p.ErrorSummary {
		msg := clip([]byte(e.Details.Message), 120)
		fmt.Fprintf(b, "errors: %d × code %d %s: %s\n", e.Count, e.Details.Code, e.Details.Type, strings.ReplaceAll(msg, "\n", " "))
	}
}
