package sim

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/traces"
)

// The index agrees with a Go map under random inserts and deletes,
// including colliding home cells and wrap-around.
func TestHashIndexAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := newHashIndex(8)
	ref := map[uint64]int32{}
	keys := []uint64{}
	for i := range 20000 {
		// Few distinct upper bits so probe runs collide and wrap.
		h := uint64(rng.IntN(64))<<idBits<<30 | uint64(rng.IntN(1<<20))<<idBits | uint64(rng.IntN(1<<20))
		if _, ok := ref[h]; ok || rng.IntN(3) == 0 && len(keys) > 0 {
			k := keys[rng.IntN(len(keys))]
			if id, ok := ref[k]; ok {
				x.del(k, id)
				delete(ref, k)
			}
			continue
		}
		id := int32(1 + i%maxEntry)
		x.put(h, id)
		ref[h] = id
		keys = append(keys, h)
	}
	assert.Equal(t, len(ref), x.n)
	for k, id := range ref {
		found := false
		for i := x.home(tag(k)); x.cells[i] != 0; i = (i + 1) & x.mask {
			found = found || x.cells[i] == tag(k)|uint64(id)
		}
		assert.True(t, found)
	}
}

func TestKVCacheLRUAndDedupe(t *testing.T) {
	kv := newKVCache(4, true)
	// Request 1: 3 blocks, registered as h1..h3.
	require.True(t, kv.alloc(3))
	held := []int32{kv.register(1), kv.register(2), kv.register(3)}
	assert.Equal(t, 3, kv.held)
	// A concurrent duplicate of block h1 is deduplicated.
	require.True(t, kv.alloc(1))
	assert.Equal(t, held[0], kv.register(1))
	assert.Equal(t, 3, kv.held)
	kv.release([]int32{held[0]}, 0)

	kv.release(held, 0) // tail first: h3 is the oldest idle block
	assert.Equal(t, 0, kv.held)
	assert.Equal(t, 3, kv.idle)
	n, idle := kv.probe([]uint64{1, 2, 3, 4}, 4)
	assert.Equal(t, 3, n)
	assert.Equal(t, 3, idle)

	require.True(t, kv.alloc(2)) // 1 free + evicts h3
	n, _ = kv.probe([]uint64{1, 2, 3}, 3)
	assert.Equal(t, 2, n)
	assert.Equal(t, int64(1), kv.evictions)
	kv.acquire(nil) // re-reference h1, h2: no longer evictable
	assert.Equal(t, 4, kv.held)
	assert.False(t, kv.alloc(1))
	assert.True(t, kv.check())
}

func TestKVCacheCompactsLRU(t *testing.T) {
	kv := newKVCache(2, true)
	require.True(t, kv.alloc(1))
	id := kv.register(7)
	for range 10000 { // release and re-acquire: stale events pile up
		kv.release([]int32{id}, 0)
		kv.probe([]uint64{7}, 1)
		kv.acquire(nil)
	}
	assert.Less(t, len(kv.lru), 4*2+1024+1)
	kv.release([]int32{id}, 0)
	require.True(t, kv.alloc(2)) // evicts the one idle block
	assert.Equal(t, 0, kv.idle)
	n, _ := kv.probe([]uint64{7}, 1)
	assert.Equal(t, 0, n)
}

func TestBlockHashes(t *testing.T) {
	a := traces.Request{InputLength: 1100, HashIDs: []int64{5, 6, 7}}
	b := traces.Request{InputLength: 1100, HashIDs: []int64{5, 6, 8}}
	ha := blockHashes(nil, &a, a.InputLength, 512, 64, 1)
	hb := blockHashes(nil, &b, b.InputLength, 512, 64, 2)
	require.Len(t, ha, 17) // 1100/64 full blocks
	assert.Equal(t, ha[:16], hb[:16])
	assert.NotEqual(t, ha[16], hb[16])
	// A block size that does not divide 512 hashes runs of each id.
	ha = blockHashes(nil, &a, a.InputLength, 512, 100, 1)
	hb = blockHashes(nil, &b, b.InputLength, 512, 100, 2)
	require.Len(t, ha, 11)
	assert.Equal(t, ha[:10], hb[:10]) // tokens 0..999 are ids 5, 6
	assert.NotEqual(t, ha[10], hb[10])
	// Without hash ids content is unique to the request (salt).
	c := traces.Request{InputLength: 200}
	assert.NotEqual(t, blockHashes(nil, &c, 200, 0, 64, 1), blockHashes(nil, &c, 200, 0, 64, 2))
}
