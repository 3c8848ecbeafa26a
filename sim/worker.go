package sim

import (
	"math/rand/v2"
	"slices"
)

type engineKind uint8

const (
	engineVLLM engineKind = iota
	engineSGLang
	engineLlamaCpp
)

// entry is one request's share of a step.
type entry struct {
	r       *request
	n       int  // tokens computed for r in the step
	prefill bool // prompt (or recomputation) tokens rather than one decode token
}

// workerStats feeds sim_summary.json.
type workerStats struct {
	requests      int64
	steps         int64
	busyNs        int64
	preemptions   int64
	prefillTokens int64
	decodeTokens  int64
	peakTokens    int64 // llamacpp: peak KV tokens over slots
	generated     int64 // output tokens emitted
	prefixQueries int64 // prompt tokens looked up in the prefix cache at admission
	prefixHits    int64 // of which found cached
	spec          specStats
}

// slot is a llamacpp slot: its request and the prompt it last held.
type slot struct {
	req      *request
	prev     []uint64 // block hashes of the slot's cached prompt
	lastUsed int64
	freeAt   int64 // the first step (w.stats.steps) that may fill it while other slots run (reuse_lag_steps)
}

// worker is one engine replica: a scheduler, its queues and its KV cache.
type worker struct {
	id   int
	name string
	sim  *simulator
	pool *pool
	kind engineKind
	bs   int

	kv      *kvCache // vllm, sglang
	cpu     *cpuTier // engine.kv_offload's CPU tier; nil: none
	slots   []slot   // llamacpp
	slotCtx int      // llamacpp tokens per slot
	// claimed is the instant a request last reached this llamacpp worker
	// idle (reuse_lag_steps > 0): others reaching it at the same instant
	// are, on a real runner, a moment later, behind the step it started.
	claimed int64
	kvCap   int64 // KV capacity in tokens

	waiting deque
	running []*request
	batch   []entry
	chunked *request // sglang: the request whose prompt continues next step
	// incoming are the requests whose KV is moving to this decode worker
	// (admitted: their blocks are allocated), and incomingBlocks their blocks.
	incoming       int
	incomingBlocks int

	jitter    *jitter // nil: deterministic step times
	drift     *drift  // nil: a constant speed
	stepEnd   int64   // when the step in flight ends, before stallNs
	stallNs   int64   // frontend.arrival_stall_ms of the server's work beside the step in flight, begun after it started: the step ends that much later
	busy      bool
	nextOrder int64
	snapshot  []*request
	stats     workerStats

	specRNG *rand.Rand // speculative decoding's acceptance draws; nil: off
}

// eng is the worker's engine configuration (its pool's).
func (w *worker) eng() *EngineConfig { return &w.pool.cfg.Engine }

// plan fills w.batch with the next step's work.
func (w *worker) plan() {
	switch w.kind {
	case engineVLLM:
		w.planVLLM()
	case engineSGLang:
		w.planSGLang()
	default:
		w.planLlamaCpp()
	}
}

func (w *worker) add(r *request, n int, prefill bool) {
	w.batch = append(w.batch, entry{r: r, n: n, prefill: prefill})
}

// grow makes r hold enough KV blocks for tokens tokens.
func (w *worker) grow(r *request, tokens int) bool {
	if tokens <= r.blocks()*w.bs {
		return true
	}
	need := ceilDiv(tokens, w.bs) - r.blocks()
	if !w.kv.alloc(need) {
		return false
	}
	r.private += need
	return true
}

// preempt sends a running request back to the front of the waiting queue,
// dropping its KV (it is recomputed later, vLLM's recompute mode). It returns
// the index r had in w.running and the tokens it had in this step's batch.
func (w *worker) preempt(r *request) (idx, scheduled int) {
	w.kv.release(r.held, r.private)
	r.held, r.private, r.computed = r.held[:0], 0, 0
	r.remoteKV = false // recomputed here
	r.preemptions++
	r.running = false
	w.stats.preemptions++
	idx = slices.Index(w.running, r)
	w.running = slices.Delete(w.running, idx, idx+1)
	if j := slices.IndexFunc(w.batch, func(e entry) bool { return e.r == r }); j >= 0 {
		scheduled = w.batch[j].n
		w.batch = slices.Delete(w.batch, j, j+1)
	}
	if w.chunked == r {
		w.chunked = nil
	}
	w.waiting.pushFront(r)
	return idx, scheduled
}

// tryAdmit admits the front waiting request with up to budget prompt tokens
// in this step, after a prefix-cache lookup, when its blocks fit beside
// reserve blocks. It returns the tokens scheduled.
func (w *worker) tryAdmit(budget, reserve int, chunking bool) (int, bool) {
	r := w.waiting.front()
	known := r.known()
	matched, idleHits := w.kv.probe(r.hashes, (known-1)/w.bs)
	cachedTok := matched * w.bs
	rest := known - cachedTok
	n := min(rest, budget)
	if n < rest && !chunking && r.generated == 0 {
		return 0, false
	}
	need := ceilDiv(cachedTok+n, w.bs) - matched
	if need+reserve > w.kv.available()-idleHits {
		return 0, false
	}
	r.held = w.kv.acquire(r.held)
	w.kv.alloc(need)
	r.private, r.computed = need, cachedTok
	r.cached = max(r.cached, cachedTok)
	if w.kv.caching {
		w.stats.prefixQueries += int64(known)
		w.stats.prefixHits += int64(cachedTok)
	}
	w.waiting.popFront()
	r.order = w.nextOrder
	w.nextOrder++
	r.running = true
	w.running = append(w.running, r)
	w.add(r, n, true)
	return n, true
}

// commit registers the prompt blocks r has filled, so later requests can
// reuse them.
func (w *worker) commit(r *request) {
	full := min(r.computed/w.bs, len(r.hashes))
	for len(r.held) < full && r.private > 0 {
		h := r.hashes[len(r.held)]
		r.held = append(r.held, w.kv.register(h))
		r.private--
		if w.cpu != nil {
			w.cpu.store(h)
		}
	}
}

// StepShape summarises the planned batch for the timing model.
func (w *worker) stepShape() StepShape {
	s := StepShape{KVCapacity: w.kvCap}
	for _, e := range w.batch {
		if e.prefill {
			n, p := int64(e.n), int64(e.r.computed)
			s.PrefillTokens += n
			s.PrefillSeqs++
			s.PrefillPrefix += p
			s.PrefillAttn += n*p + n*(n+1)/2
			s.MaxContext = max(s.MaxContext, p+n)
		} else {
			c, d := int64(e.r.known()), int64(e.n-1) // d draft positions beside the sequence's token
			s.DecodeSeqs++
			s.DecodeContext += c
			s.SpecTokens += d
			s.SpecAttn += d*c + d*(d+1)/2
			s.MaxContext = max(s.MaxContext, c+1+d)
		}
	}
	return s
}

// want is the tokens r asks of the next step: its known tokens not yet
// computed and, for a decoding sequence under speculative decoding, its
// drafts (no more than the output tokens it still needs beyond the next).
func (w *worker) want(r *request) int {
	n := r.remaining()
	if sp := w.pool.spec; sp != nil && r.decoding() && r.generated > 0 {
		n += max(0, min(sp.k, r.osl-r.generated-1))
	}
	return n
}

// draftNs is the drafter's time in the planned step of shape st (0
// without speculative decoding).
func (w *worker) draftNs(st StepShape) int64 {
	sp := w.pool.spec
	if sp == nil {
		return 0
	}
	var drafters, ctx int64
	passes := 0
	for _, e := range w.batch {
		if !e.prefill && e.n > 1 {
			drafters++
			ctx += int64(e.r.known())
			passes = max(passes, e.n-1)
		}
	}
	return sp.draftNs(st, drafters, ctx, passes)
}

// verify draws how many of e's drafts the target accepts and counts them
// (vLLM's spec_decode counters); 0 for an entry without drafts.
func (w *worker) verify(e entry) int {
	d := e.n - 1
	if e.prefill || d <= 0 {
		return 0
	}
	a := w.pool.spec.accept(w.specRNG, d)
	st := &w.stats.spec
	st.drafts++
	st.draftTokens += int64(d)
	st.accepted += int64(a)
	for i := range a {
		st.perPos[i]++
	}
	return a
}

// freeRejected returns the blocks r grew for drafts the target rejected:
// it keeps those of its computed tokens.
func (w *worker) freeRejected(r *request) {
	if extra := min(r.blocks()-ceilDiv(r.computed, w.bs), r.private); extra > 0 {
		w.kv.release(nil, extra)
		r.private -= extra
	}
}

// soloNs is how long r's prompt chunk of e.n tokens would take alone.
func (w *worker) soloNs(e entry) int64 {
	n, p := int64(e.n), int64(e.r.computed)
	s := StepShape{PrefillTokens: n, PrefillSeqs: 1, PrefillPrefix: p, PrefillAttn: n*p + n*(n+1)/2, KVCapacity: w.kvCap, MaxContext: p + n}
	return w.pool.clock.StepNs(s)
}

// startStep plans and starts a step at now; false when there is nothing to do.
func (w *worker) startStep(now int64) bool {
	w.batch = w.batch[:0]
	w.plan()
	if len(w.batch) == 0 {
		return false
	}
	st := w.stepShape()
	dur := w.drift.apply(now, w.jitter.apply(w.pool.clock.StepNs(st)+w.draftNs(st)))
	dur += w.sim.steal.stall(now, dur)
	for _, e := range w.batch {
		if !e.prefill || e.r.generated > 0 {
			continue
		}
		if !e.r.started {
			e.r.started, e.r.prefillAt = true, now
		}
		e.r.ownPrefill += min(dur, w.soloNs(e))
	}
	w.stats.steps++
	w.stats.busyNs += dur
	w.stats.prefillTokens += st.PrefillTokens
	w.stats.decodeTokens += st.DecodeSeqs
	w.busy = true
	w.stepEnd = now + dur
	w.sim.push(now+dur, evStepEnd, int32(w.id))
	return true
}

// endStep applies the step's effects at its end: KV computed, prompt blocks
// registered, and one token for every sequence whose known tokens are all
// computed, stamped now (with speculative decoding, one more per accepted
// draft, in the same chunk; the rejected drafts' KV is freed).
func (w *worker) endStep(now int64) {
	w.busy = false
	finished := false
	for _, e := range w.batch {
		r := e.r
		accepted := w.verify(e)
		if e.prefill || e.n == 1 {
			r.computed += e.n
		} else {
			r.computed += 1 + accepted
			w.freeRejected(r)
		}
		if e.prefill && w.kv != nil && w.kv.caching {
			w.commit(r)
		}
		if r.computed < r.known() {
			continue
		}
		if r.kv == kvPrefill {
			w.sim.prefilled(w, r, now)
			finished = true
			continue
		}
		w.sim.token(r, now, 1+accepted)
		if r.generated == r.osl {
			w.finish(r, now)
			finished = true
		}
	}
	if finished {
		w.running = slices.DeleteFunc(w.running, func(r *request) bool { return !r.running })
	}
}

func (w *worker) finish(r *request, now int64) {
	r.running = false
	if w.kv != nil {
		w.kv.release(r.held, r.private)
		r.private = 0
		w.sim.recycle(r)
	} else {
		s := &w.slots[r.slot]
		s.req, s.prev, s.lastUsed = nil, r.hashes, now
		s.freeAt = w.stats.steps + int64(w.eng().LlamaCpp.ReuseLagSteps)
	}
	if w.chunked == r {
		w.chunked = nil
	}
	w.sim.complete(r, now)
}

// load is the router's view of the worker: prompt tokens still to compute
// and KV blocks of the active (waiting and running) requests.
func (w *worker) load() (prefillTokens, blocks int) {
	for i := range w.waiting.len() {
		r := w.waiting.at(i)
		if r.kv != kvWaiting { // a prompt computed elsewhere needs no prefill here
			prefillTokens += r.remaining()
		}
		blocks += ceilDiv(r.known(), w.bs)
	}
	blocks += w.incomingBlocks
	for _, r := range w.running {
		if !r.decoding() {
			prefillTokens += r.remaining()
		}
		blocks += ceilDiv(r.known(), w.bs)
	}
	return prefillTokens, blocks
}

func (w *worker) active() int { return w.waiting.len() + len(w.running) + w.incoming }

// seqs is the sequences holding a slot: running, and admitted with their KV
// on the way.
func (w *worker) seqs() int { return len(w.running) + w.incoming }

// overlap is the number of r's leading blocks this worker has cached.
func (w *worker) overlap(hashes []uint64) int {
	if w.kv != nil {
		n, _ := w.kv.probe(hashes, len(hashes))
		return n
	}
	best := 0
	for i := range w.slots {
		best = max(best, commonPrefix(w.slots[i].prev, hashes))
	}
	return best
}

func commonPrefix(a, b []uint64) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// kvTokens is the KV currently held, in tokens.
func (w *worker) kvTokens() int64 {
	if w.kv != nil {
		return int64(w.kv.held) * int64(w.bs)
	}
	var t int64
	for _, s := range w.slots {
		if s.req != nil {
			t += int64(s.req.computed)
		}
	}
	return t
}
