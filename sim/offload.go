package sim

import (
	"container/list"
	"math"
)

// cpuTier is a worker's CPU KV tier (engine.kv_offload): the hashes of the
// prompt blocks it holds in host memory, least recently stored or loaded
// first out. It holds no content: a block is found by its chained hash, as
// the GPU prefix cache finds it. container/list and a map do the LRU: the
// tier sees one operation per prompt block, far from the simulator's hot
// path of steps and tokens.
type cpuTier struct {
	capacity int
	order    *list.List               // front: most recent
	at       map[uint64]*list.Element // hash → its element
	nsPerTok float64                  // load time per token: one rank's share of its KV over its host link
	// loadsEnd is when the loads queued so far end: they run one after
	// another, as copies on the connector's one load stream do.
	loadsEnd int64

	stored, loaded int64 // blocks stored, blocks loaded back
}

// offloadTier is a worker's CPU tier under cfg's engine.kv_offload, or
// nil when it has none. One rank loads its share of a token's KV
// (tensor parallelism splits the KV heads) over its own host link.
func offloadTier(cfg Config) (*cpuTier, error) {
	if cfg.Engine.KVOffload == nil {
		return nil, nil
	}
	gbs, err := cfg.offloadBandwidthGBs()
	if err != nil {
		return nil, err
	}
	blocks, err := cfg.offloadBlocks()
	if err != nil {
		return nil, err
	}
	m, err := cfg.Hardware.ResolveModel()
	if err != nil {
		return nil, err
	}
	perRank := cfg.Hardware.KVBytesPerToken(m) / float64(max(cfg.Hardware.TensorParallel, 1))
	return newCPUTier(blocks, perRank, gbs), nil
}

func newCPUTier(capacity int, bytesPerToken, gbs float64) *cpuTier {
	return &cpuTier{capacity: capacity, order: list.New(), at: make(map[uint64]*list.Element, capacity),
		nsPerTok: bytesPerToken / gbs} // bytes / (GB/s) = ns
}

// store puts block h in the tier (most recent), evicting the least recent
// block when the tier is full.
func (c *cpuTier) store(h uint64) {
	if e, ok := c.at[h]; ok {
		c.order.MoveToFront(e)
		return
	}
	if c.order.Len() >= c.capacity {
		last := c.order.Back()
		delete(c.at, last.Value.(uint64))
		c.order.Remove(last)
	}
	c.at[h] = c.order.PushFront(h)
	c.stored++
}

// run is how many of hashes, from the first, the tier holds, as a prefix.
func (c *cpuTier) run(hashes []uint64) int {
	n := 0
	for _, h := range hashes {
		if _, ok := c.at[h]; !ok {
			break
		}
		n++
	}
	return n
}

// loadNs is the time to load blocks of bs tokens (one rank's shard over
// its own link; the ranks load at once).
func (c *cpuTier) loadNs(blocks, bs int) int64 {
	return int64(math.Ceil(float64(blocks*bs) * c.nsPerTok))
}

// offloadLoad queues a load of the blocks of r's prompt that w's CPU tier
// holds past w's GPU prefix-cache hit, when the scheduler comes to r (a
// new request, or a preempted one coming back), and reports whether it
// did: the caller takes r out of the waiting queue. As vLLM's connector
// does, the load holds its GPU blocks (and the hit before them) while it
// runs; at its end (evKVLoaded) they are cached blocks like any other and
// r is back at the front of the queue, where its admission finds them.
// The last prompt token is always computed, as the GPU lookup leaves it.
func (s *simulator) offloadLoad(r *request, w *worker) bool {
	limit := min((r.known()-1)/w.bs, len(r.hashes))
	matched, idleHits := w.kv.probe(r.hashes, limit)
	// What the GPU cache has no room for, beside the hit the load holds,
	// stays unloaded: r computes it.
	loaded := min(w.cpu.run(r.hashes[matched:limit]), w.kv.available()-idleHits)
	if loaded <= 0 {
		return false
	}
	r.held = w.kv.acquire(r.held)
	w.kv.alloc(loaded)
	for _, h := range r.hashes[matched : matched+loaded] {
		r.held = append(r.held, w.kv.register(h))
		w.cpu.store(h) // a load touches the block
	}
	w.cpu.loaded += int64(loaded)
	w.cpu.loadsEnd = max(w.cpu.loadsEnd, s.now) + w.cpu.loadNs(loaded, w.bs)
	s.push(w.cpu.loadsEnd, evKVLoaded, r.wi)
	return true
}

// kvLoaded ends r's load: its blocks are cached blocks nobody holds (the
// head of the prompt evicted last), and r is back at the front of its
// worker's waiting queue.
func (s *simulator) kvLoaded(r *request) {
	w := r.w
	w.kv.release(r.held, 0)
	r.held = r.held[:0]
	w.waiting.pushFront(r)
	s.dirty[w.id] = true
}
