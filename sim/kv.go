package sim

// kvCache is one worker's paged KV cache with prefix caching.
//
// A block is in one of three states: free (no content), held (referenced by
// at least one request: either a request's private block, or a shared
// block registered under its chained hash) or idle (a registered block no
// request references, kept for prefix reuse). Idle blocks are evicted in
// least-recently-released order, only when no free block is left. A request
// releases its blocks tail first, so the end of a prompt is evicted before
// its shared beginning (vLLM's order).
//
// The LRU order is a queue of release events (entry id, generation); an
// entry referenced again or released again later makes its older events
// stale, and eviction skips them.
type kvCache struct {
	capacity int
	held     int // blocks referenced by requests
	idle     int // registered blocks nobody references
	peak     int
	caching  bool

	index   *hashIndex
	entries []kvEntry // entries[0] is unused
	freeIDs []int32
	lru     []uint64 // release events: id<<32 | generation, oldest at lruHead
	lruHead int

	evictions int64
	scratch   []int32 // probe results
}

type kvEntry struct {
	hash uint64
	ref  int32
	gen  uint32 // bumped at every release
}

// maxKVBlocks bounds a worker's KV blocks (entry ids are 24-bit).
const maxKVBlocks = maxEntry - 1

func newKVCache(capacity int, caching bool) *kvCache {
	kv := &kvCache{capacity: capacity, caching: caching, index: newHashIndex(capacity)}
	kv.entries = append(kv.entries, kvEntry{})
	return kv
}

// available is the number of blocks a request could still obtain: free plus
// idle (evictable) blocks.
func (kv *kvCache) available() int { return kv.capacity - kv.held }

// lookup finds the entry cached under h.
func (kv *kvCache) lookup(h uint64) (int32, bool) {
	x := kv.index
	t := tag(h)
	for i := x.home(t); x.cells[i] != 0; i = (i + 1) & x.mask {
		if c := x.cells[i]; tag(c) == t {
			if id := int32(c & idMask); kv.entries[id].hash == h {
				return id, true
			}
		}
	}
	return 0, false
}

// probe finds how many of hashes[:max] are cached, as a prefix. It records the
// entries in kv.scratch for acquire and returns the count and how many of them
// are idle (acquiring them takes them out of the available pool).
func (kv *kvCache) probe(hashes []uint64, maxBlocks int) (n, idleHits int) {
	kv.scratch = kv.scratch[:0]
	if !kv.caching {
		return 0, 0
	}
	for _, h := range hashes[:min(maxBlocks, len(hashes))] {
		id, ok := kv.lookup(h)
		if !ok {
			break
		}
		kv.scratch = append(kv.scratch, id)
		if kv.entries[id].ref == 0 {
			idleHits++
		}
	}
	return len(kv.scratch), idleHits
}

// acquire references the entries found by the last probe, appending them to
// held.
func (kv *kvCache) acquire(held []int32) []int32 {
	for _, id := range kv.scratch {
		kv.ref(id)
		held = append(held, id)
	}
	return held
}

// ref adds a reference to entry id (an idle entry becomes held).
func (kv *kvCache) ref(id int32) {
	e := &kv.entries[id]
	if e.ref == 0 {
		kv.idle--
		kv.held++
		kv.peak = max(kv.peak, kv.held)
	}
	e.ref++
}

// alloc takes n private blocks, evicting idle blocks when no free one is
// left. It reports false (and takes nothing) when fewer than n are available.
func (kv *kvCache) alloc(n int) bool {
	if n > kv.available() {
		return false
	}
	for free := kv.capacity - kv.held - kv.idle; free < n; free++ {
		kv.evict()
	}
	kv.held += n
	kv.peak = max(kv.peak, kv.held)
	return true
}

// evict drops the least recently released idle block (there is one).
func (kv *kvCache) evict() {
	for {
		ev := kv.lru[kv.lruHead]
		kv.lruHead++
		id, gen := int32(ev>>32), uint32(ev)
		e := &kv.entries[id]
		if e.ref != 0 || e.gen != gen || e.hash == 0 {
			continue // stale event
		}
		kv.index.del(e.hash, id)
		e.hash = 0
		kv.freeIDs = append(kv.freeIDs, id)
		kv.idle--
		kv.evictions++
		return
	}
}

// register turns one of a request's private blocks, now full with content h,
// into a shared block and returns its entry. When h is already cached (another
// request computed the same block meanwhile) the request switches to that
// block and its private copy is freed.
func (kv *kvCache) register(h uint64) int32 {
	if id, ok := kv.lookup(h); ok {
		kv.held-- // the private copy
		kv.ref(id)
		return id
	}
	var id int32
	if n := len(kv.freeIDs); n > 0 {
		id = kv.freeIDs[n-1]
		kv.freeIDs = kv.freeIDs[:n-1]
	} else {
		id = int32(len(kv.entries))
		kv.entries = append(kv.entries, kvEntry{})
	}
	e := &kv.entries[id]
	e.hash, e.ref = h, 1 // the generation carries on, so old events stay stale
	kv.index.put(h, id)
	return id
}

// release drops a request's blocks: private ones become free, shared ones
// lose a reference and turn idle (most recently released) at zero, tail
// first.
func (kv *kvCache) release(held []int32, private int) {
	kv.held -= private
	for i := len(held) - 1; i >= 0; i-- {
		id := held[i]
		e := &kv.entries[id]
		e.ref--
		if e.ref == 0 {
			kv.held--
			kv.idle++
			e.gen++
			kv.lru = append(kv.lru, uint64(id)<<32|uint64(e.gen))
		}
	}
	kv.compactLRU()
}

// compactLRU drops consumed and stale events once they dominate the queue.
func (kv *kvCache) compactLRU() {
	if len(kv.lru) < 4*kv.capacity+1024 {
		return
	}
	out := kv.lru[:0]
	for _, ev := range kv.lru[kv.lruHead:] {
		e := &kv.entries[int32(ev>>32)]
		if e.ref == 0 && e.gen == uint32(ev) && e.hash != 0 {
			out = append(out, ev)
		}
	}
	kv.lru, kv.lruHead = out, 0
}

// check verifies the accounting (tests).
func (kv *kvCache) check() bool {
	return kv.held >= 0 && kv.idle >= 0 && kv.held+kv.idle <= kv.capacity && kv.peak <= kv.capacity
}
