package sim

import (
	"fmt"
	"strconv"
)

// pool is a group of identical workers: their resolved configuration,
// timing model and KV size. Aggregated serving has one pool of role "";
// disaggregated serving a prefill pool and a decode pool.
type pool struct {
	role    string
	cfg     Config
	clock   clock
	blocks  int // KV blocks per worker (block engines)
	kind    engineKind
	spec    *speculator // nil: no speculative decoding
	workers []*worker
}

// WorkerNames are the workers' names in id order: worker-0, … for
// aggregated serving; prefill-0, …, decode-0, … for disaggregated serving.
func WorkerNames(cfg Config) []string {
	if !cfg.Disaggregated() {
		out := make([]string, cfg.Workers)
		for i := range out {
			out[i] = workerName("", i)
		}
		return out
	}
	d := cfg.Disaggregation
	out := make([]string, 0, d.PrefillWorkers+d.DecodeWorkers)
	for i := range d.PrefillWorkers {
		out = append(out, workerName(RolePrefill, i))
	}
	for i := range d.DecodeWorkers {
		out = append(out, workerName(RoleDecode, i))
	}
	return out
}

func workerName(role string, i int) string {
	if role == "" {
		role = "worker"
	}
	return role + "-" + strconv.Itoa(i)
}

// buildPools makes the pools and their workers (ids in WorkerNames order).
func (s *simulator) buildPools() error {
	if !s.cfg.Disaggregated() {
		p, err := s.newPool("", s.cfg, s.cfg.Workers)
		s.pools = []*pool{p}
		return err
	}
	d := s.cfg.Disaggregation
	pre, err := s.newPool(RolePrefill, s.cfg.PoolConfig(RolePrefill), d.PrefillWorkers)
	if err != nil {
		return fmt.Errorf("disaggregation.prefill: %w", err)
	}
	dec, err := s.newPool(RoleDecode, s.cfg.PoolConfig(RoleDecode), d.DecodeWorkers)
	if err != nil {
		return fmt.Errorf("disaggregation.decode: %w", err)
	}
	s.pools, s.prefill, s.decode = []*pool{pre, dec}, pre, dec
	return nil
}

func (s *simulator) newPool(role string, cfg Config, n int) (*pool, error) {
	p := &pool{role: role, cfg: cfg}
	e := &p.cfg.Engine
	p.kind = map[string]engineKind{"vllm": engineVLLM, "sglang": engineSGLang, "llamacpp": engineLlamaCpp}[e.Type]
	var err error
	if p.clock, err = newTiming(&p.cfg); err != nil {
		return nil, err
	}
	if *e, err = p.cfg.ResolveEngine(); err != nil {
		return nil, err
	}
	if p.spec, err = newSpeculator(p.cfg); err != nil {
		return nil, err
	}
	if p.kind != engineLlamaCpp {
		if p.blocks, err = p.cfg.KVBlocks(); err != nil {
			return nil, err
		}
	}
	for i := range n {
		id := len(s.workers)
		w := &worker{id: id, name: workerName(role, i), sim: s, pool: p, kind: p.kind, bs: e.BlockSize,
			jitter: newJitter(p.cfg.Timing, s.cfg.Seed, id), drift: newDrift(p.cfg.Timing, s.cfg.Seed, id)}
		if p.spec != nil {
			w.specRNG = newSpecRNG(s.cfg.Seed, id)
			w.stats.spec.perPos = make([]int64, p.spec.k)
		}
		if p.kind == engineLlamaCpp {
			w.slots = make([]slot, e.LlamaCpp.Parallel)
			w.slotCtx = e.LlamaCpp.CtxSize / e.LlamaCpp.Parallel
			w.kvCap = int64(e.LlamaCpp.CtxSize)
		} else {
			w.kv = newKVCache(p.blocks, e.EnablePrefixCaching)
			w.kvCap = int64(p.blocks) * int64(e.BlockSize)
			if w.cpu, err = offloadTier(p.cfg); err != nil {
				return nil, err
			}
		}
		p.workers = append(p.workers, w)
		s.workers = append(s.workers, w)
	}
	return p, nil
}

// rejectReason says why a request of isl prompt and osl output tokens can
// never be served by this pool's workers, or "". A prefill pool holds only
// the prompt; the others hold the whole sequence.
func (p *pool) rejectReason(isl, osl int) string {
	e := &p.cfg.Engine
	need := isl + osl - 1
	if p.role == RolePrefill {
		need = isl
	}
	in := ""
	if p.role != "" {
		in = " (" + p.role + " pool)"
	}
	switch {
	case e.MaxModelLen > 0 && isl+osl > e.MaxModelLen:
		return fmt.Sprintf("ISL %d + OSL %d exceeds engine.max_model_len %d%s", isl, osl, e.MaxModelLen, in)
	case e.Type == "llamacpp" && need > e.LlamaCpp.CtxSize/e.LlamaCpp.Parallel:
		return fmt.Sprintf("ISL %d + OSL %d − 1 tokens exceed the slot context of %d tokens (llamacpp.ctx_size %d / parallel %d)",
			isl, osl, e.LlamaCpp.CtxSize/e.LlamaCpp.Parallel, e.LlamaCpp.CtxSize, e.LlamaCpp.Parallel)
	case e.Type != "llamacpp" && p.role == RolePrefill && ceilDiv(need, e.BlockSize) > p.blocks:
		return fmt.Sprintf("needs %d KV blocks (ISL %d at block size %d) but a prefill worker has %d",
			ceilDiv(need, e.BlockSize), isl, e.BlockSize, p.blocks)
	case e.Type != "llamacpp" && ceilDiv(need, e.BlockSize) > p.blocks:
		return fmt.Sprintf("needs %d KV blocks (ISL %d + OSL %d − 1 tokens at block size %d) but a worker has %d%s",
			ceilDiv(need, e.BlockSize), isl, osl, e.BlockSize, p.blocks, in)
	case e.Type == "vllm" && !e.EnableChunkedPrefill && p.role != RoleDecode && isl > e.MaxNumBatchedTokens:
		return fmt.Sprintf("ISL %d exceeds engine.max_num_batched_tokens %d with chunked prefill disabled%s",
			isl, e.MaxNumBatchedTokens, in)
	}
	return ""
}
