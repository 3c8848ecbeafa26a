package sim

// hashIndex maps block hashes to cache entry ids: open addressing with linear
// probing and backward-shift deletion (no tombstones), sized to at least
// twice its contents. A cell packs the hash's upper 40 bits with a 24-bit
// entry id into one word (0 = empty); the home cell comes from the same
// upper bits. A match on the upper bits is confirmed by the caller against
// the entry's full hash. A worker's index never holds more entries than its
// KV blocks, so it stays small and cache-resident: several times faster than
// a Go map under the simulator's constant insert/evict churn.
type hashIndex struct {
	cells []uint64
	mask  uint64
	n     int
}

const (
	idBits   = 24
	idMask   = 1<<idBits - 1
	maxEntry = idMask // entry ids are 1..maxEntry
)

func newHashIndex(capacity int) *hashIndex {
	size := 16
	for size < 2*capacity && size < 1<<22 {
		size *= 2
	}
	return &hashIndex{cells: make([]uint64, size), mask: uint64(size - 1)}
}

func tag(h uint64) uint64 { return h &^ idMask }

func (x *hashIndex) home(t uint64) uint64 { return (t >> idBits) & x.mask }

// put inserts id under h.
func (x *hashIndex) put(h uint64, id int32) {
	if 2*(x.n+1) > len(x.cells) {
		x.grow()
	}
	x.insert(tag(h) | uint64(id))
}

func (x *hashIndex) insert(c uint64) {
	i := x.home(tag(c))
	for x.cells[i] != 0 {
		i = (i + 1) & x.mask
	}
	x.cells[i] = c
	x.n++
}

// del removes the cell of h and id, shifting later cells of its probe run
// back.
func (x *hashIndex) del(h uint64, id int32) {
	c := tag(h) | uint64(id)
	i := x.home(tag(c))
	for x.cells[i] != c {
		if x.cells[i] == 0 {
			return
		}
		i = (i + 1) & x.mask
	}
	for j := (i + 1) & x.mask; x.cells[j] != 0; j = (j + 1) & x.mask {
		home := x.home(tag(x.cells[j]))
		// Move j back to i unless its home lies cyclically in (i, j].
		if (j-home)&x.mask >= (j-i)&x.mask {
			x.cells[i] = x.cells[j]
			i = j
		}
	}
	x.cells[i] = 0
	x.n--
}

func (x *hashIndex) grow() {
	old := x.cells
	x.cells = make([]uint64, 2*len(old))
	x.mask = uint64(len(x.cells) - 1)
	x.n = 0
	for _, c := range old {
		if c != 0 {
			x.insert(c)
		}
	}
}
