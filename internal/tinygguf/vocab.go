package tinygguf

import (
	"fmt"
	"math/rand/v2"

	"github.com/simbench/simbench/internal/promptwords"
)

// Token types of tokenizer.ggml.token_type (llama.cpp's llama_token_type).
const (
	TokenNormal  int32 = 1
	TokenUnknown int32 = 2
	TokenControl int32 = 3
	TokenByte    int32 = 6
)

// Special token ids, the SentencePiece/Llama-2 convention.
const (
	UNK = 0
	BOS = 1
	EOS = 2
)

// Space is SentencePiece's visible space, which starts word tokens.
const Space = "▁"

// FirstByteToken is the id of <0x00>; the 256 byte tokens follow it.
const FirstByteToken = 3

// Vocab is a SentencePiece-style vocabulary: pieces, scores (higher merges
// first) and token types, index-aligned.
type Vocab struct {
	Tokens []string
	Scores []float32
	Types  []int32
	index  map[string]int32
	limit  int
}

// NewVocab builds a vocabulary of exactly size pieces, in this order:
//
//	<unk> <s> </s>, <0x00>…<0xFF>     specials and byte fallback
//	"▁", the printable ASCII characters
//	"▁w", "▁wo", … "▁word"             every prefix of loadgen's prompt words
//	                                   (required), then of more common words
//	"w", "wo", … "word"                the same without the leading space
//	"aa" … "zz"                        letter bigrams
//	synthetic pieces                   pseudo-random letters, fixed stream
//
// Scores fall with the id, so the SPM tokenizer merges a word's "▁" chain
// before any piece without "▁": every listed word is one token after a
// space. The vocabulary depends on size only, never on the model seed.
func NewVocab(size int) (*Vocab, error) {
	if m := MinVocab(); size < m {
		return nil, fmt.Errorf("vocabulary size %d is below the minimum %d", size, m)
	}
	v := newVocab(size)
	v.required()
	v.optional()
	if len(v.Tokens) != size {
		return nil, fmt.Errorf("vocabulary: built %d pieces, want %d", len(v.Tokens), size)
	}
	return v, nil
}

// MinVocab is the smallest size NewVocab accepts: specials, bytes, ASCII
// and every prefix of loadgen's prompt words.
func MinVocab() int {
	v := newVocab(1 << 30)
	v.required()
	return len(v.Tokens)
}

func newVocab(limit int) *Vocab {
	v := &Vocab{index: make(map[string]int32, min(limit, 1<<16)), limit: limit}
	v.add("<unk>", TokenUnknown)
	v.add("<s>", TokenControl)
	v.add("</s>", TokenControl)
	for b := range 256 {
		v.add(fmt.Sprintf("<0x%02X>", b), TokenByte)
	}
	return v
}

// add appends piece unless it is present or the vocabulary is full. Normal
// pieces score -id, specials and bytes 0.
func (v *Vocab) add(piece string, typ int32) {
	if _, dup := v.index[piece]; dup || len(v.Tokens) >= v.limit {
		return
	}
	id := int32(len(v.Tokens))
	score := float32(0)
	if typ == TokenNormal {
		score = -float32(id)
	}
	v.index[piece] = id
	v.Tokens = append(v.Tokens, piece)
	v.Scores = append(v.Scores, score)
	v.Types = append(v.Types, typ)
}

func (v *Vocab) addNormal(piece string) { v.add(piece, TokenNormal) }

func (v *Vocab) required() {
	v.addNormal(Space)
	for c := byte('!'); c <= '~'; c++ {
		v.addNormal(string(c))
	}
	v.prefixes(Space, promptwords.All())
}

func (v *Vocab) optional() {
	v.prefixes(Space, moreWords[:])
	v.prefixes("", promptwords.All())
	v.prefixes("", moreWords[:])
	for a := 'a'; a <= 'z'; a++ {
		for b := 'a'; b <= 'z'; b++ {
			v.addNormal(string([]rune{a, b}))
		}
	}
	v.synthetic()
}

// prefixes adds lead+w[:i] for every word w and i = 1…len(w).
func (v *Vocab) prefixes(lead string, words []string) {
	for _, w := range words {
		for i := 1; i <= len(w); i++ {
			v.addNormal(lead + w[:i])
		}
	}
}

// synthetic fills the rest with 2–7 letter pieces, half of them with a
// leading "▁", from a fixed stream so the vocabulary never depends on a seed.
func (v *Vocab) synthetic() {
	r := rand.New(rand.NewPCG(0x73696d62, 0x656e6368))
	for tries := 0; len(v.Tokens) < v.limit && tries < 64*v.limit; tries++ {
		b := make([]byte, 0, 10)
		if r.IntN(2) == 0 {
			b = append(b, Space...)
		}
		for range 2 + r.IntN(6) {
			b = append(b, byte('a'+r.IntN(26)))
		}
		v.addNormal(string(b))
	}
}

// ID returns the id of piece.
func (v *Vocab) ID(piece string) (int32, bool) {
	id, ok := v.index[piece]
	return id, ok
}

// Unreachable reports whether the model must never sample id: UNK, BOS, the
// byte tokens, and EOS unless eosReachable. Every other piece decodes to
// non-empty ASCII text (or a space).
func (v *Vocab) Unreachable(id int, eosReachable bool) bool {
	if id == EOS {
		return !eosReachable
	}
	return v.Types[id] != TokenNormal
}
