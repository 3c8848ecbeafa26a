package tinygguf

import (
	"container/heap"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Tokenize splits text as llama.cpp's SentencePiece tokenizer does with this
// vocabulary (add_space_prefix on, no special-token parsing, no BOS): spaces
// become "▁", one "▁" is prepended, then adjacent symbols are merged,
// highest-scoring merge first (leftmost on ties), and a symbol that is not a
// piece falls back to its byte tokens.
func (v *Vocab) Tokenize(text string) []int32 {
	s := Space + strings.ReplaceAll(text, " ", Space)
	syms := initialSymbols(s)
	q := &mergeQueue{}
	for i := 0; i+1 < len(syms); i++ {
		v.tryMerge(q, s, syms, i, i+1)
	}
	for q.Len() > 0 {
		m := heap.Pop(q).(merge)
		l, r := &syms[m.left], &syms[m.right]
		if l.n == 0 || r.n == 0 || l.next != m.right || l.n+r.n != m.size {
			continue // stale: a side was merged since
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = m.left
		}
		v.tryMerge(q, s, syms, l.prev, m.left)
		v.tryMerge(q, s, syms, m.left, l.next)
	}
	return v.emit(s, syms)
}

// symbol is a span [at, at+n) of the escaped text in a linked list.
type symbol struct {
	at, n      int
	prev, next int
}

func initialSymbols(s string) []symbol {
	var syms []symbol
	for at := 0; at < len(s); {
		_, n := utf8.DecodeRuneInString(s[at:])
		syms = append(syms, symbol{at: at, n: n, prev: len(syms) - 1, next: len(syms) + 1})
		at += n
	}
	if len(syms) > 0 {
		syms[len(syms)-1].next = -1
	}
	return syms
}

func (v *Vocab) tryMerge(q *mergeQueue, s string, syms []symbol, left, right int) {
	if left < 0 || right < 0 {
		return
	}
	l, r := syms[left], syms[right]
	id, ok := v.index[s[l.at:r.at+r.n]]
	if !ok {
		return
	}
	heap.Push(q, merge{left: left, right: right, score: v.Scores[id], size: l.n + r.n})
}

func (v *Vocab) emit(s string, syms []symbol) []int32 {
	var out []int32
	for i := 0; i >= 0 && i < len(syms); i = syms[i].next {
		piece := s[syms[i].at : syms[i].at+syms[i].n]
		if id, ok := v.index[piece]; ok {
			out = append(out, id)
			continue
		}
		for _, b := range []byte(piece) {
			out = append(out, FirstByteToken+int32(b))
		}
	}
	return out
}

// Piece returns the text of id as it is printed: "▁" becomes a space, byte
// tokens their byte.
func (v *Vocab) Piece(id int32) (string, error) {
	if id < 0 || int(id) >= len(v.Tokens) {
		return "", fmt.Errorf("token id %d out of range [0, %d)", id, len(v.Tokens))
	}
	if v.Types[id] == TokenByte {
		return string([]byte{byte(id - FirstByteToken)}), nil
	}
	return strings.ReplaceAll(v.Tokens[id], Space, " "), nil
}

type merge struct {
	left, right int
	score       float32
	size        int
}

// mergeQueue is a max-heap on score, then leftmost.
type mergeQueue []merge

func (q mergeQueue) Len() int { return len(q) }
func (q mergeQueue) Less(i, j int) bool {
	if q[i].score != q[j].score {
		return q[i].score > q[j].score
	}
	return q[i].left < q[j].left
}
func (q mergeQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *mergeQueue) Push(x any)   { *q = append(*q, x.(merge)) }
func (q *mergeQueue) Pop() any {
	old := *q
	m := old[len(old)-1]
	*q = old[:len(old)-1]
	return m
}
