package calibrate

import (
	"cmp"
	"math"
	"slices"
	"sort"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
)

// Step is one engine step seen through the token stream: its duration and
// what it computed. With one chunk per token, a request's token gap is the
// duration of one engine step it took part in, and every request decoding
// in that step received its token at the same step end. Grouping all
// requests' token arrivals by step end therefore recovers the engine's
// step timeline, batch by batch, from client timestamps alone.
type Step struct {
	Ms    float64       // duration: the mean token gap of the requests decoding in it and the one before
	Gaps  int           // token gaps averaged into Ms
	Shape sim.StepShape // decoding sequences and their context, prompt chunks finished in it
	// Sends is how many requests were sent while the step ran.
	Sends int
	// Frontend is how much of the server's work on requests the step ran
	// beside, in requests: each request's share of its frontend window
	// (StepsOptions.FrontendMs from its send) that the step overlapped, or,
	// with no window, Sends. On a CPU engine that work takes CPU from the
	// steps beside it (frontend.arrival_stall_ms a request).
	Frontend float64
	// mix is an aggregate's mean step (aggregateStep): the shapes of the
	// steps it averages and their shares; nil for a step of the token gaps.
	mix []mixShape
}

// stream is one request's token arrivals, ms from the run's first send.
type stream struct {
	isl  int
	ttft float64
	ack  float64 // response headers, ms from the send; 0: not recorded
	at   []float64
}

// sent is when the request was sent: its first token less its TTFT.
func (s stream) sent() float64 { return s.at[0] - s.ttft }

type arrival struct {
	ms     float64
	stream int
	tok    int
}

// StepsOptions tune ExtractSteps.
type StepsOptions struct {
	// ChunkTokens is the engine's prompt chunk (vLLM's token budget,
	// llama.cpp's n_batch): a longer prompt is computed over the steps
	// before its first token, a chunk each. 0 = prompts are never chunked.
	ChunkTokens int
	// PerSlot: the chunk bounds each prompt on its own (Ollama's runner)
	// rather than a budget the step's decodes and prompts share.
	PerSlot bool
	// Tolerance groups arrivals less than this many ms apart into one step
	// end; 0 = a quarter of the median token gap (at least 0.2 ms).
	Tolerance float64
	// FrontendMs is how long the server works on a request from its send
	// (Step.Frontend); 0 counts the sends in each step instead.
	FrontendMs float64
}

// ExtractSteps recovers engine steps from a run's records. Records with
// more tokens than chunks (multi-token chunks) carry no step timing, so a
// run of such records yields no steps; ok reports whether most valid records
// had one chunk per token.
func ExtractSteps(recs []results.RecordMetrics, opts StepsOptions) (steps []Step, ok bool) {
	streams, single := tokenStreams(recs)
	if len(streams) == 0 || single*2 < len(recs) {
		return nil, false
	}
	arr := arrivals(streams)
	med := medianGap(streams)
	tol := opts.Tolerance
	if tol <= 0 {
		tol = max(0.2, med/4)
	}
	ends := groupEnds(arr, tol, max(tol, min(maxFirstTokenLagMs, med)))
	return buildSteps(streams, arr, ends, opts), true
}

// tokenStreams turns valid one-chunk-per-token records into arrival times.
func tokenStreams(recs []results.RecordMetrics) ([]stream, int) {
	var origin int64
	for i := range recs {
		if s := recs[i].Meta.RequestStartNs; s > 0 && (origin == 0 || s < origin) {
			origin = s
		}
	}
	var out []stream
	for i := range recs {
		m := &recs[i]
		ttft, ok1 := m.Get(results.TagTTFT)
		osl, ok2 := m.Get(results.TagOSL)
		isl, _ := m.Get(results.TagISL)
		if m.Error != nil || !ok1 || !ok2 || int(osl) != len(m.ICL)+1 || m.Meta.RequestStartNs == 0 {
			continue
		}
		at := make([]float64, 0, len(m.ICL)+1)
		t := float64(m.Meta.RequestStartNs-origin)/1e6 + ttft
		at = append(at, t)
		for _, g := range m.ICL {
			t += g
			at = append(at, t)
		}
		st := stream{isl: int(isl), ttft: ttft, at: at}
		if a := m.Meta.RequestAckNs; a > m.Meta.RequestStartNs {
			st.ack = float64(a-m.Meta.RequestStartNs) / 1e6
		}
		out = append(out, st)
	}
	return out, len(out)
}

func arrivals(streams []stream) []arrival {
	var arr []arrival
	for si, s := range streams {
		for ti, t := range s.at {
			arr = append(arr, arrival{ms: t, stream: si, tok: ti})
		}
	}
	slices.SortFunc(arr, func(a, b arrival) int {
		return cmp.Or(cmp.Compare(a.ms, b.ms), cmp.Compare(a.stream, b.stream), cmp.Compare(a.tok, b.tok))
	})
	return arr
}

func medianGap(streams []stream) float64 {
	var gaps []float64
	for _, s := range streams {
		for i := 1; i < len(s.at); i++ {
			gaps = append(gaps, s.at[i]-s.at[i-1])
		}
	}
	if len(gaps) == 0 {
		return 0
	}
	return median(gaps)
}

// maxFirstTokenLagMs bounds how late a request's first token may reach the
// client after the other tokens of the step that computed it. Ollama's
// server delivers a stream's first token 0–5 ms after the decode tokens of
// the same step; the next step's tokens come 20 ms or more after them (the
// step that computed a prompt is long). Split from its step, the prompt's
// chunk lands in no step and the step it took looks like a slow decode.
const maxFirstTokenLagMs = 5

// groupEnds assigns each arrival a step-end index: a new step end starts
// when an arrival is more than tol after the previous one, or when its
// request already has a token at the current step end. A request's first
// token and the decode tokens of its step may reach the client up to tol0
// apart in either order: the server delivers the first token a little late
// or a little early (by 0–5 ms); so tol0 applies to a first token, and to a
// decode token that follows a step end holding first tokens only.
func groupEnds(arr []arrival, tol, tol0 float64) []int {
	ends := make([]int, len(arr))
	cur := 0
	members := map[int]bool{}
	firstsOnly := true // the current step end holds first tokens only (so far)
	for i, a := range arr {
		t := tol
		if a.tok == 0 || firstsOnly {
			t = tol0
		}
		if i > 0 && (a.ms-arr[i-1].ms > t || members[a.stream]) {
			cur++
			clear(members)
			firstsOnly = true
		}
		members[a.stream] = true
		firstsOnly = firstsOnly && a.tok == 0
		ends[i] = cur
	}
	return ends
}

// timeline is the engine's steps as the token stream shows them: step k
// ends at arrival group k.
type timeline struct {
	end     []float64       // step end (ms): the earliest arrival of the group
	bridged []bool          // a request had tokens at k−1 and k: step k is exactly (end[k−1], end[k]]
	shapes  []sim.StepShape // what each step computed
	sum     []float64       // Σ token gaps ending at k
	cnt     []int
	avail   []int  // prompt tokens the step's budget had left (after decodes and booked prompts)
	prompts []int  // prompts booked in the step
	multi   []bool // a prompt spread over several steps touches it
	dropped []bool // what the step computed is ambiguous: left out
	unknown []bool // a prompt the stream could not book may have taken budget here
	perSlot bool   // every prompt has the whole chunk in every step
	chunk   int
}

// prompt is a request's prompt: sent at sent, first token at step end k.
type prompt struct {
	sent float64
	isl  int
	k    int
}

// buildSteps turns the grouped arrivals into steps. A step's duration is
// known when some request had tokens at both its start and its end (it
// stayed in the batch, so the engine was busy between them). Decodes come
// straight from the tokens; prompts are booked by bookPrompt.
func buildSteps(streams []stream, arr []arrival, ends []int, opts StepsOptions) []Step {
	if len(ends) == 0 {
		return nil
	}
	tl := newTimeline(ends[len(ends)-1]+1, opts.ChunkTokens)
	tl.perSlot = opts.PerSlot
	var prompts []prompt
	last := make([]int, len(streams))  // the step end of each stream's latest token
	late := make([]bool, len(streams)) // … and whether it reached the client apart from its step
	for i, a := range arr {
		k, s := ends[i], streams[a.stream]
		if tl.end[k] < 0 {
			tl.end[k] = a.ms
		}
		if a.tok == 0 {
			prompts = append(prompts, prompt{sent: s.sent(), isl: s.isl, k: k})
			last[a.stream] = k
			continue
		}
		tl.shapes[k].DecodeSeqs++
		tl.shapes[k].DecodeContext += int64(s.isl + a.tok)
		tl.shapes[k].MaxContext = max(tl.shapes[k].MaxContext, int64(s.isl+a.tok)+1)
		tl.avail[k]--
		j := last[a.stream]
		switch {
		case j != k-1:
			// The token reached the client after another request's
			// tokens of the next step: the server delivered it late (by
			// 3–20 ms on the CPU engine). The steps its gap spans lack its
			// sequence, so their shapes are wrong, and the gap times no
			// one step; nor does the next gap, which starts late.
			tl.drop(j+1, k)
			late[a.stream] = true
		case late[a.stream]:
			late[a.stream] = false
		default:
			tl.sum[k] += s.at[a.tok] - s.at[a.tok-1]
			tl.cnt[k]++
		}
		last[a.stream] = k
	}
	for k := 1; k < len(tl.end); k++ {
		tl.bridged[k] = tl.cnt[k] > 0
	}
	// Prompts that finish first had the budget first.
	slices.SortStableFunc(prompts, func(a, b prompt) int { return cmp.Or(cmp.Compare(a.k, b.k), cmp.Compare(a.sent, b.sent)) })
	for _, p := range prompts {
		tl.bookPrompt(p)
	}
	sends := tl.sends(streams)
	front := tl.frontend(streams, opts.FrontendMs)
	var out []Step
	for k := range tl.end {
		if tl.cnt[k] > 0 && !tl.dropped[k] {
			st := Step{Ms: tl.sum[k] / float64(tl.cnt[k]), Gaps: tl.cnt[k], Shape: tl.shapes[k], Sends: sends[k],
				Frontend: float64(sends[k])}
			if front != nil {
				st.Frontend = front[k]
			}
			out = append(out, st)
		}
	}
	return out
}

// frontend is, per step known to be busy throughout (bridged), the share
// of every request's frontend window [sent, sent + w] the step overlapped;
// nil without a window.
func (tl *timeline) frontend(streams []stream, w float64) []float64 {
	if !(w > 0) {
		return nil
	}
	out := make([]float64, len(tl.end))
	for _, s := range streams {
		a, b := s.sent(), s.sent()+w
		k := max(1, sort.Search(len(tl.end), func(i int) bool { return tl.end[i] > a }))
		for ; k < len(tl.end) && tl.end[k-1] < b; k++ {
			if !tl.bridged[k] || tl.end[k-1] < 0 {
				continue
			}
			if o := min(b, tl.end[k]) - max(a, tl.end[k-1]); o > 0 {
				out[k] += o / w
			}
		}
	}
	return out
}

// sends counts, per step, the requests sent while it ran: at or after the
// previous step's end, before its own, in a step known to be busy
// throughout (bridged). A request sent to an idle engine stalls nothing.
func (tl *timeline) sends(streams []stream) []int {
	n := make([]int, len(tl.end))
	for _, s := range streams {
		t := s.sent()
		// A send at a step's end (to the µs: the times are sums of gaps)
		// is the next step's.
		k := sort.Search(len(tl.end), func(i int) bool { return tl.end[i] > t+1e-3 })
		if k > 0 && k < len(tl.end) && tl.bridged[k] {
			n[k]++
		}
	}
	return n
}

func newTimeline(n, chunk int) *timeline {
	budget := chunk
	if budget <= 0 {
		budget = math.MaxInt32
	}
	tl := &timeline{end: make([]float64, n), bridged: make([]bool, n), shapes: make([]sim.StepShape, n),
		sum: make([]float64, n), cnt: make([]int, n), avail: make([]int, n), prompts: make([]int, n),
		multi: make([]bool, n), dropped: make([]bool, n), unknown: make([]bool, n)}
	for k := range tl.end {
		tl.end[k], tl.avail[k] = -1, budget
	}
	tl.chunk = budget
	return tl
}

// bookPrompt books p's prompt tokens on the steps that computed them. The
// engine fills each step's token budget with decodes first, then prompt
// chunks, so a prompt that finished at step k took all the budget left in
// the steps before k back to where it started, and the rest at k. It
// cannot have started in a step that began before it was sent. The start
// is the latest step from which filling the budget finishes the prompt
// exactly at k; when there is none (the stream and the budget disagree:
// cached tokens, an unseen idle step) or several prompts spread over the
// same steps, those steps are left out of the fit.
func (tl *timeline) bookPrompt(p prompt) {
	lo := tl.earliest(p)
	j0, chunks, ok := tl.fill(p, lo)
	if !ok || tl.budgetUnknown(lo, p.k) {
		// The prompt was computed somewhere between its send and its first
		// token; which steps, the stream cannot say. A first token
		// delivered apart from its step's decode tokens leaves its step
		// unbridged, so earliest stops there, and the prompt's chunks
		// before it would pass for slow decodes (250 ms ones, on the CPU
		// engine's c2-medium plan run). Nor can the budget it left in
		// those steps be known, so a prompt computed in them after it
		// cannot be booked either: filled as if it had the whole budget,
		// the second of two long prompts sent together was booked whole
		// into the step that computed its last 82 tokens.
		from := tl.firstAfter(p.sent)
		tl.drop(from, p.k)
		if !tl.perSlot {
			for j := max(from, 0); j <= p.k; j++ {
				tl.unknown[j] = true
			}
		}
		return
	}
	// Steps p could have used but did not: the engine held it back (a busy
	// slot, a frontend delay) or the booking is off; either way unsure.
	tl.drop(lo, j0-1)
	spread := len(chunks) > 1
	for i, c := range chunks {
		j := j0 + i
		if !tl.perSlot && tl.prompts[j] > 0 && (spread || tl.multi[j]) {
			tl.drop(j0, p.k)
		}
		tl.multi[j] = tl.multi[j] || spread
		tl.prompts[j]++
		if !tl.perSlot {
			tl.avail[j] -= c
		}
		done := 0
		for _, d := range chunks[:i] {
			done += d
		}
		n, pre := int64(c), int64(done)
		sh := &tl.shapes[j]
		sh.PrefillTokens += n
		sh.PrefillSeqs++
		sh.PrefillPrefix += pre
		sh.PrefillAttn += n*pre + n*(n+1)/2
		sh.MaxContext = max(sh.MaxContext, pre+n)
	}
}

// budgetUnknown: a step in [from, to] may have given budget to a prompt
// the stream could not book.
func (tl *timeline) budgetUnknown(from, to int) bool {
	return slices.Contains(tl.unknown[max(from, 0):to+1], true)
}

// earliest is the first step p can have been computed in: the first one
// that began after p was sent, within the run of contiguous known steps
// ending at k (a step whose start is unknown may hold p).
func (tl *timeline) earliest(p prompt) int {
	j := p.k
	for j > 0 && tl.bridged[j] && tl.end[j-1] >= p.sent {
		j--
	}
	if tl.bridged[j] && j > 0 && tl.end[j-1] < p.sent && j < p.k {
		j++ // step j began before p was sent
	}
	return j
}

// firstAfter is the first step that ended after ms.
func (tl *timeline) firstAfter(ms float64) int {
	return sort.Search(len(tl.end), func(i int) bool { return tl.end[i] > ms })
}

// fill finds p's start step and its chunks: the earliest step from which
// filling each step's remaining budget finishes the prompt exactly at k.
func (tl *timeline) fill(p prompt, lo int) (int, []int, bool) {
	for j0 := lo; j0 <= p.k; j0++ {
		avail := tl.avail[j0 : p.k+1]
		if tl.perSlot {
			avail = slices.Repeat([]int{tl.chunk}, p.k+1-j0)
		}
		if chunks, ok := forwardFill(avail, p.isl); ok {
			return j0, chunks, true
		}
	}
	return 0, nil, false
}

// forwardFill takes min(left, avail) per step and reports whether the
// prompt finishes in the last step and not before.
func forwardFill(avail []int, isl int) ([]int, bool) {
	left := isl
	chunks := make([]int, len(avail))
	for i, a := range avail {
		c := min(left, max(a, 0))
		chunks[i] = c
		left -= c
		if left == 0 {
			return chunks, i == len(avail)-1 && c > 0
		}
	}
	return nil, false
}

func (tl *timeline) drop(from, to int) {
	for j := max(from, 0); j <= to; j++ {
		tl.dropped[j] = true
	}
}

// Prefill is a request that met an idle engine and had it to itself until
// its first token: its TTFT is the frontend request overhead plus the steps
// that computed its prompt, alone (Chunks).
type Prefill struct {
	TTFTMs float64
	AckMs  float64 // its response headers, from the send; 0: not recorded
	Chunks []sim.StepShape
}

// IdlePrefills finds the requests of a run that were alone in the system
// from their send to their first token (every other request had finished
// before, or was sent after): at concurrency 1 all of them. Their TTFTs
// tell the prompt's compute from the frontend overhead once prompt lengths
// vary, which the token gaps alone cannot.
func IdlePrefills(recs []results.RecordMetrics, opts StepsOptions) []Prefill {
	streams, _ := tokenStreams(recs)
	idx := make([]int, len(streams))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(streams[a].sent(), streams[b].sent()) })
	var out []Prefill
	lastEnd := math.Inf(-1) // latest last token among the streams sent before
	for n, i := range idx {
		s := streams[i]
		alone := lastEnd < s.sent() && (n+1 == len(idx) || streams[idx[n+1]].sent() > s.at[0])
		if alone && s.isl > 0 {
			out = append(out, Prefill{TTFTMs: s.ttft, AckMs: s.ack, Chunks: soloChunks(s.isl, opts.ChunkTokens)})
		}
		lastEnd = max(lastEnd, s.at[len(s.at)-1])
	}
	return out
}

// soloChunks are the steps of a prompt computed alone: full chunks, then
// the rest.
func soloChunks(isl, chunk int) []sim.StepShape {
	if chunk <= 0 {
		chunk = isl
	}
	var out []sim.StepShape
	for done := 0; done < isl; done += chunk {
		n, p := int64(min(chunk, isl-done)), int64(done)
		out = append(out, sim.StepShape{PrefillTokens: n, PrefillSeqs: 1, PrefillPrefix: p, PrefillAttn: n*p + n*(n+1)/2, MaxContext: p + n})
	}
	return out
}
