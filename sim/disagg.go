package sim

import (
	"math"
)

// Disaggregated serving, as Dynamo runs it with vLLM (PrefillRouter and the
// NIXL connector):
//
//  1. At arrival the router (router.policy over the prefill pool; kv is
//     KV-aware over the prefill workers' prefix caches) picks a prefill
//     worker. With max_local_prefill_tokens > 0 the decode worker is picked
//     first, and a prompt whose part not cached there is at most that many
//     tokens is prefilled on it like an aggregated request.
//  2. The prefill worker's own scheduler computes the prompt (chunked
//     prefill, prefix cache) and emits no token.
//  3. When its last prompt token is computed, the decode router picks the
//     decode worker (unless picked at arrival): Dynamo's KV cost over the
//     decode pool, overlap_weight × blocks to prefill or receive + KV blocks
//     of its active requests; ties go to fewer active requests, then the
//     lower index.
//  4. The request waits in the decode worker's queue until its scheduler
//     admits it: KV blocks for the whole prompt (after a prefix-cache
//     lookup) and a sequence slot. Admission starts the transfer of the
//     prompt tokens the decode worker does not hold: latency_ms, then
//     tokens × the model's KV bytes per token at bandwidth_gbs (shared
//     fairly among concurrent transfers with contention).
//  5. At the transfer's end the prefill worker releases its blocks (they
//     stay in its prefix cache, evictable), the decode worker registers
//     the received blocks in its own, and the request joins its running
//     set. Its first step there is a one-token decode that emits the first
//     token; no decode worker computes a prompt token (unless it preempts
//     the request, which recomputes it as vLLM's recompute mode does).

// route sends an arriving request to its prefill worker, or prefills it on
// its decode worker under conditional disaggregation.
func (s *simulator) route(r *request) {
	var dw *worker
	if limit := s.cfg.Disaggregation.MaxLocalPrefillTokens; limit > 0 {
		dw = s.pickDecode(r)
		if rest := r.isl - s.cachedOn(dw, r); rest <= limit && dw.canPrefill(rest) && dw.pool.rejectReason(r.isl, r.osl) == "" {
			s.xfer.local++
			s.enqueue(r, dw)
			return
		}
	}
	pw := s.prefill.workers[s.router.pick(r)]
	r.h, r.kv = &handoff{pw: pw, dw: dw}, kvPrefill
	s.enqueue(r, pw)
}

// cachedOn is the prompt tokens w has cached, at most ISL − 1 (the last
// prompt token is always computed).
func (s *simulator) cachedOn(w *worker, r *request) int {
	if !w.eng().EnablePrefixCaching || len(r.hashes) == 0 {
		return 0
	}
	return min(w.overlap(r.hashes)*w.bs, r.isl-1)
}

// canPrefill reports whether w's scheduler can compute rest prompt tokens
// of a request (vLLM without chunked prefill needs them in one step).
func (w *worker) canPrefill(rest int) bool {
	e := w.eng()
	return e.Type != "vllm" || e.EnableChunkedPrefill || rest <= e.MaxNumBatchedTokens
}

// pickDecode is the decode router (step 3 above).
func (s *simulator) pickDecode(r *request) *worker {
	var best *worker
	bestCost := math.Inf(1)
	for _, w := range s.decode.workers {
		pending, blocks := w.load()
		c := s.cfg.Router.OverlapWeight*float64(pending+r.isl-s.cachedOn(w, r))/float64(w.bs) + float64(blocks)
		if c < bestCost || c == bestCost && w.active() < best.active() {
			best, bestCost = w, c
		}
	}
	return best
}

// prefilled is called when the prefill worker w has computed r's whole
// prompt at engine time now: r leaves w's running set (its blocks stay
// held) and queues at its decode worker.
func (s *simulator) prefilled(w *worker, r *request, now int64) {
	r.running = false
	if w.chunked == r {
		w.chunked = nil
	}
	r.h.pDone, r.h.pOwn = now, r.ownPrefill
	r.h.pHeld, r.h.pPrivate = r.held, r.private
	r.held, r.private, r.computed = s.heldBuf(), 0, 0
	r.kv = kvWaiting
	if s.metrics != nil {
		s.metrics.prefilled(r)
	}
	dw := r.h.dw
	if dw == nil {
		dw = s.pickDecode(r)
	}
	s.enqueue(r, dw)
}

// admitHandoff admits the front waiting request, whose KV is on its
// prefill worker, when its prompt blocks fit beside reserve blocks, and
// starts the transfer. The prefix-cache lookup keeps the last prompt token
// out, as for any admission.
func (w *worker) admitHandoff(reserve int) bool {
	r := w.waiting.front()
	matched, idleHits := w.kv.probe(r.hashes, (r.isl-1)/w.bs)
	need := ceilDiv(r.isl, w.bs) - matched
	if need+reserve > w.kv.available()-idleHits {
		return false
	}
	r.held = w.kv.acquire(r.held)
	w.kv.alloc(need)
	r.private, r.computed = need, matched*w.bs
	if w.kv.caching {
		w.stats.prefixQueries += int64(r.isl)
		w.stats.prefixHits += int64(r.computed)
	}
	w.waiting.popFront()
	w.incoming++
	w.incomingBlocks += r.blocks()
	w.sim.startTransfer(r)
	return true
}

// startTransfer moves the prompt tokens r's decode worker lacks.
func (s *simulator) startTransfer(r *request) {
	r.kv = kvMoving
	r.h.xferStart = s.now
	r.h.xferBytes = int64(math.Round(float64(r.isl-r.computed) * s.link.bytesPerToken))
	s.xfer.start(r.h.xferBytes)
	at := s.now + s.link.latency
	if s.link.shared {
		s.push(at, evTransferJoin, r.wi)
		return
	}
	s.push(at+s.link.soloNs(r.h.xferBytes), evTransferEnd, r.wi)
}

// transferDone lands r's KV on its decode worker.
func (s *simulator) transferDone(r *request) {
	r.h.xferEnd = s.now
	r.kv, r.remoteKV = kvArrived, true
	s.xfer.done(r.h.xferEnd - r.h.xferStart)
	pw := r.h.pw
	pw.kv.release(r.h.pHeld, r.h.pPrivate)
	s.spareHeld = append(s.spareHeld, r.h.pHeld[:0])
	r.h.pHeld, r.h.pPrivate = nil, 0
	s.dirty[pw.id] = true // freed KV may admit a waiting prompt
	w := r.w
	w.incoming--
	w.incomingBlocks -= r.blocks()
	r.computed = r.isl
	if w.kv.caching {
		w.commit(r)
	}
	r.computed = r.isl - 1 // the first step decodes: see request.decoding
	r.running = true
	r.order = w.nextOrder
	w.nextOrder++
	w.running = append(w.running, r)
	s.dirty[w.id] = true
}

// transferStats feeds sim_summary.json.
type transferStats struct {
	count, bytes, busyNs int64
	local                int64 // requests prefilled on their decode worker
	active, peak         int
}

func (t *transferStats) start(bytes int64) {
	t.count++
	t.bytes += bytes
	t.active++
	t.peak = max(t.peak, t.active)
}

func (t *transferStats) done(ns int64) {
	t.active--
	t.busyNs += ns
}

// link is the KV-transfer fabric. Without contention every transfer has
// bandwidth_gbs to itself; with it, the transfers moving bytes at once
// share it equally (processor sharing), so two simultaneous transfers each
// take twice as long.
type link struct {
	bytesPerToken float64
	bytesPerNs    float64 // bandwidth_gbs: 1 GB/s is 1 byte/ns
	latency       int64
	shared        bool
	moving        sharedServer // the transfers on the shared link, in bytes
	done          []int32      // scratch of linkDone
}

func newLink(c KVTransferConfig, bytesPerToken float64) *link {
	return &link{bytesPerToken: bytesPerToken, bytesPerNs: c.BandwidthGBs, latency: msToNs(c.LatencyMs), shared: c.Contention,
		moving: sharedServer{rate: c.BandwidthGBs}}
}

// soloNs is how long bytes take at the full bandwidth, rounded up.
func (l *link) soloNs(bytes int64) int64 { return int64(math.Ceil(float64(bytes) / l.bytesPerNs)) }

// linkJoin starts moving r's bytes on the shared link.
func (s *simulator) linkJoin(r *request) {
	s.link.moving.join(s.now, r.wi, float64(r.h.xferBytes))
	s.linkSchedule()
}

// linkSchedule schedules the check for the transfer that ends first at
// the current share (an earlier check is made stale by the generation).
func (s *simulator) linkSchedule() {
	if gen, at, ok := s.link.moving.next(s.now); ok {
		s.push(at, evLinkDone, gen)
	}
}

// linkDone ends the transfers that have moved all their bytes.
func (s *simulator) linkDone(gen int32) {
	l := s.link
	if l.moving.stale(gen) {
		return
	}
	l.done = l.moving.finish(s.now, l.done[:0])
	for _, wi := range l.done {
		s.transferDone(s.live[wi])
	}
	s.linkSchedule()
}
