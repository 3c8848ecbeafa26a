package tokenizer

import "container/heap"

// bpe merges piece's bytes by merge rank, lowest first and leftmost among
// equal ranks (HF's Word::merge_all), and returns the token ids with each
// token's end offset within piece.
func (t *Tokenizer) bpe(piece []byte) (ids, ends []int32) {
	if t.ignore {
		if id, ok := t.vocab[string(piece)]; ok {
			return []int32{id}, []int32{int32(len(piece))}
		}
	}
	n := len(piece)
	sym := make([]symbol, n)
	for i, c := range piece {
		sym[i] = symbol{id: t.byteID[c], prev: int32(i - 1), next: int32(i + 1), end: int32(i + 1)}
	}
	sym[n-1].next = -1
	q := make(pairQueue, 0, n)
	for i := 0; i+1 < n; i++ {
		if m, ok := t.merges[pairKey(sym[i].id, sym[i+1].id)]; ok {
			q = append(q, pair{rank: m.rank, pos: int32(i), id: m.id})
		}
	}
	heap.Init(&q)
	for q.Len() > 0 {
		p := heap.Pop(&q).(pair)
		a := &sym[p.pos]
		if a.gone || a.next < 0 {
			continue
		}
		b := &sym[a.next]
		if m, ok := t.merges[pairKey(a.id, b.id)]; !ok || m.id != p.id {
			continue // stale: a neighbour merged since this pair was queued
		}
		a.id, a.end, a.next = p.id, b.end, b.next
		b.gone = true
		if a.next >= 0 {
			sym[a.next].prev = p.pos
			if m, ok := t.merges[pairKey(a.id, sym[a.next].id)]; ok {
				heap.Push(&q, pair{rank: m.rank, pos: p.pos, id: m.id})
			}
		}
		if a.prev >= 0 {
			if m, ok := t.merges[pairKey(sym[a.prev].id, a.id)]; ok {
				heap.Push(&q, pair{rank: m.rank, pos: a.prev, id: m.id})
			}
		}
	}
	for i := int32(0); i >= 0; i = sym[i].next {
		ids = append(ids, sym[i].id)
		ends = append(ends, sym[i].end)
	}
	return ids, ends
}

type symbol struct {
	id         int32
	prev, next int32 // neighbours, -1 at the ends
	end        int32 // offset past the symbol's last byte
	gone       bool  // merged into its left neighbour
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

type pair struct {
	rank, pos, id int32
}

// pairQueue is a min-heap by rank, then position.
type pairQueue []pair

func (q pairQueue) Len() int { return len(q) }
func (q pairQueue) Less(i, j int) bool {
	if q[i].rank != q[j].rank {
		return q[i].rank < q[j].rank
	}
	return q[i].pos < q[j].pos
}
func (q pairQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *pairQueue) Push(x any)   { *q = append(*q, x.(pair)) }
func (q *pairQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}
