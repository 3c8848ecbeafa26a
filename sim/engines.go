package sim

// planVLLM is vLLM v1's scheduler as DynoSim's mocker models it (§1.3):
//
//  1. Running requests, oldest first, each take min(remaining known tokens,
//     token budget): one token for a decode, the next chunk of a prompt
//     still being prefilled. When a request cannot get the KV blocks for its
//     tokens, the newest running request (lifo; the oldest with fifo) is
//     preempted: its blocks are freed and it goes back to the front of the
//     waiting queue, to be recomputed. If the victim is the request itself,
//     it is not scheduled.
//  2. Only if nothing was preempted, waiting requests are admitted first come
//     first served while running < max_num_seqs and budget remains: prefix
//     cache lookup (at most the known tokens − 1), then the first chunk
//     (the whole rest of the prompt without chunked prefill; a preempted
//     request is always allowed to chunk its recomputation). Admission stops
//     at the first request whose blocks do not fit.
func (w *worker) planVLLM() {
	cfg := w.eng()
	budget, preempted := w.scheduleRunning(cfg.MaxNumBatchedTokens)
	if preempted {
		return
	}
	for w.waiting.len() > 0 && w.seqs() < cfg.MaxNumSeqs && budget > 0 && w.admissible(w.waiting.front()) {
		if w.waiting.front().kv == kvWaiting {
			if !w.admitHandoff(0) {
				break
			}
			continue
		}
		if w.cpu != nil && w.sim.offloadLoad(w.waiting.front(), w) {
			w.waiting.popFront() // back at the front when its load ends; those behind it go on
			continue
		}
		n, ok := w.tryAdmit(budget, 0, cfg.EnableChunkedPrefill)
		if !ok {
			break
		}
		budget -= n
	}
}

// admissible reports whether the next step may take r: not while others
// run if r reached the engine after that step was planned
// (async_scheduling, llamacpp's reuse_lag_steps). FIFO: those behind r
// reached it later still.
func (w *worker) admissible(r *request) bool {
	return len(w.running) == 0 || w.stats.steps >= r.readyAt
}

// scheduleRunning gives every running request, oldest first, its tokens
// within the budget. It returns the budget left and whether it preempted.
func (w *worker) scheduleRunning(budget int) (int, bool) {
	preempted := false
	for i := 0; i < len(w.running) && budget > 0; i++ {
		r := w.running[i]
		n := min(w.want(r), budget)
		var back int
		var fits, any bool
		i, back, any, fits = w.makeRoom(r, n, i)
		budget += back
		preempted = preempted || any
		if fits {
			w.add(r, n, !r.decoding())
			budget -= n
		}
	}
	return budget, preempted
}

// makeRoom grows r's KV (r is w.running[i]) for n more tokens, preempting
// victims (the newest running request; the oldest with fifo) until it fits.
// It returns r's index after the removals (i−1 when r itself was the
// victim), the budget victims scheduled earlier in this step gave back,
// whether it preempted, and whether r fits.
func (w *worker) makeRoom(r *request, n, i int) (idx, back int, preempted, fits bool) {
	for !w.grow(r, r.computed+n) {
		v := w.running[len(w.running)-1]
		if w.eng().Preemption == "fifo" {
			v = w.running[0]
		}
		at, got := w.preempt(v)
		back += got
		preempted = true
		if v == r {
			return i - 1, back, true, false
		}
		if at < i {
			i--
		}
	}
	return i, back, preempted, true
}

// planSGLang is SGLang's prefill-priority loop (enable_mixed_chunk off):
//
//   - A prefill batch runs on its own whenever there is prompt work: first
//     the chunked request left from the last step, then waiting requests
//     first come first served under chunked_prefill_size tokens and
//     max_num_seqs; a request whose prompt does not fit the remaining budget
//     gets a chunk and continues in the next step (only one at a time).
//     Admission keeps new_token_ratio × the running requests' remaining
//     output free, like SGLang's PrefillAdder.
//   - Otherwise every running request decodes one token. When a decode
//     cannot get a KV block, SGLang retracts the running request with the
//     fewest output tokens (ties: the longest prompt, then the newest); its
//     prompt blocks stay cached for its re-admission.
//
// Decodes therefore stall while prompts are computed: a 40k-token prompt is
// five back-to-back 8192-token steps with no decode in between.
func (w *worker) planSGLang() {
	w.planSGLangPrefill()
	if len(w.batch) > 0 {
		return
	}
	w.snapshot = append(w.snapshot[:0], w.running...)
	for _, r := range w.snapshot {
		if r.running && w.growRetracting(r, r.computed+1, nil) {
			w.add(r, 1, !r.decoding())
		}
	}
}

// planSGLangPrefill builds the prefill batch: the chunked request first,
// then new requests until the budget, a chunk or max_num_seqs stops it.
func (w *worker) planSGLangPrefill() {
	cfg := w.eng()
	budget := cfg.SGLang.ChunkedPrefillSize
	if r := w.chunked; r != nil {
		n := min(r.remaining(), budget)
		if w.growRetracting(r, r.computed+n, r) {
			w.add(r, n, true)
			budget -= n
			if n == r.remaining() {
				w.chunked = nil
			}
		}
	}
	for w.chunked == nil && w.waiting.len() > 0 && budget > 0 && w.seqs() < cfg.MaxNumSeqs && w.admissible(w.waiting.front()) {
		r := w.waiting.front()
		if r.kv == kvWaiting {
			if !w.admitHandoff(w.reserveBlocks()) {
				break
			}
			continue
		}
		n, ok := w.tryAdmit(budget, w.reserveBlocks(), true)
		if !ok {
			break
		}
		budget -= n
		if n < r.remaining() {
			w.chunked = r
		}
	}
}

// growRetracting grows r's KV, retracting other running requests (never
// protect) until it fits. It reports false when r itself was retracted or
// nothing could be retracted; w.running may shrink before r's position only
// if r is retracted.
func (w *worker) growRetracting(r *request, tokens int, protect *request) bool {
	for !w.grow(r, tokens) {
		v := w.retractVictim(protect)
		if v == nil {
			return false
		}
		w.preempt(v)
		if v == r {
			return false
		}
	}
	return true
}

// retractVictim is SGLang's retract order: fewest output tokens, then the
// longest prompt, then the newest.
func (w *worker) retractVictim(protect *request) *request {
	var best *request
	for _, r := range w.running {
		if r == protect {
			continue
		}
		if best == nil || r.generated < best.generated ||
			r.generated == best.generated && (r.isl > best.isl || r.isl == best.isl && r.order > best.order) {
			best = r
		}
	}
	return best
}

// reserveBlocks is the KV kept free for the running requests' future output.
func (w *worker) reserveBlocks() int {
	ratio := w.eng().SGLang.NewTokenRatio
	if ratio == 0 || w.pool.role == RolePrefill { // a prefill worker generates nothing
		return 0
	}
	rest := 0
	for _, r := range w.running {
		rest += r.osl - r.generated
	}
	return ceilDiv(int(ratio*float64(rest)), w.bs)
}

// planLlamaCpp is llama.cpp's server loop (and Ollama's runner): a fixed set
// of slots, each with its own KV of ctx_size/parallel tokens and a prompt
// cache holding the slot's last prompt.
//
//   - A waiting request takes the free slot whose cached prompt shares the
//     longest prefix with it (ties: least recently used, then lowest index);
//     that prefix, up to the prompt length − 1, is not recomputed. While
//     other slots run, a slot freed in the last reuse_lag_steps steps is
//     not free yet, and a request that reached the runner during the last
//     reuse_lag_steps steps is not admitted yet (Ollama's runner).
//   - Each step is one batch of at most n_batch tokens: one decode token for
//     every generating slot first, then prompt chunks of the slots still
//     reading their prompt, in slot order.
func (w *worker) planLlamaCpp() {
	lagged := len(w.running) > 0 // an idle runner takes a request at once
	for w.waiting.len() > 0 {
		r := w.waiting.front()
		if !w.admissible(r) {
			break // it reached the runner during the last step (FIFO: so did those behind it)
		}
		s := w.pickSlot(r, lagged)
		if s < 0 {
			break
		}
		w.assignSlot(w.waiting.popFront(), s)
	}
	lc := w.eng().LlamaCpp
	budget := lc.NBatch
	for i := range w.slots {
		if r := w.slots[i].req; r != nil && r.decoding() && budget > 0 {
			w.add(r, 1, false)
			budget--
		}
	}
	for i := range w.slots {
		if r := w.slots[i].req; r != nil && !r.decoding() && budget > 0 {
			n := min(r.remaining(), budget)
			if lc.Batch == LlamaCppBatchPerSlot {
				n = min(r.remaining(), lc.NBatch)
			}
			w.add(r, n, true)
			if lc.Batch != LlamaCppBatchPerSlot {
				budget -= n
			}
		}
	}
	tokens := w.kvTokens()
	for _, e := range w.batch {
		tokens += int64(e.n)
	}
	w.stats.peakTokens = max(w.stats.peakTokens, tokens)
}

// pickSlot is the free slot r takes; with lagged, slots freed within the
// last reuse_lag_steps steps are not yet free.
func (w *worker) pickSlot(r *request, lagged bool) int {
	best, bestLCP := -1, -1
	for i := range w.slots {
		s := &w.slots[i]
		if s.req != nil || lagged && w.stats.steps < s.freeAt {
			continue
		}
		lcp := 0
		if w.eng().EnablePrefixCaching {
			lcp = commonPrefix(s.prev, r.hashes)
		}
		if best < 0 || lcp > bestLCP || lcp == bestLCP && s.lastUsed < w.slots[best].lastUsed {
			best, bestLCP = i, lcp
		}
	}
	return best
}

func (w *worker) assignSlot(r *request, i int) {
	s := &w.slots[i]
	lcp := 0
	if w.eng().EnablePrefixCaching {
		lcp = commonPrefix(s.prev, r.hashes)
	}
	r.computed = min(lcp*w.bs, r.isl-1)
	r.cached = max(r.cached, r.computed)
	r.slot = i
	r.order = w.nextOrder
	w.nextOrder++
	s.req, s.prev = r, nil
	r.running = true
	w.running = append(w.running, r)
}

// sglangChunk is SGLang's default chunked_prefill_size for the device
// (server_args.py, by the GPU's memory in MiB): 2048 below 35 GiB (L4,
// RTX 4090), 4096 below 60 GiB (A100 40 GB, L40S), 8192 below 160 GiB
// (H100, H200, A100 80 GB), 16384 above (B200, GB200); 4096 when there is
// no GPU memory to read (a CPU).
func sglangChunk(h HardwareConfig) (int, error) {
	d, err := h.ResolveDevice()
	if err != nil {
		return 0, err
	}
	if d.CPU {
		return 4096, nil
	}
	mib := d.MemGB * 1e9 / (1 << 20)
	switch {
	case mib < 35*1024:
		return 2048, nil
	case mib < 60*1024:
		return 4096, nil
	case mib < 160*1024:
		return 8192, nil
	default:
		return 16384, nil
	}
}
