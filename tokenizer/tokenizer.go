// Package tokenizer counts tokens exactly as a Hugging Face byte-level BPE
// tokenizer (tokenizer.json: Qwen2/3, Llama 3, GPT-2, DeepSeek, ...) does
// with encode(text, add_special_tokens=False), AIPerf's call: added tokens
// are split out first, the rest is normalized (NFC/NFKC/NFD/NFKD), split by
// the Split and ByteLevel pre-tokenizers, and each piece is BPE-merged.
//
// It is written here rather than taken from a library: the pure-Go
// candidate, github.com/sugarme/tokenizer v0.3.0, compiles the Split
// pre-tokenizer's pattern with Go's regexp, which has no lookahead, so
// loading the Qwen3 (and Llama 3) tokenizer.json panics on `\s+(?!\S)`; it
// also reads merges only as "a b" strings, not the [a, b] pairs newer files
// carry. A pattern is compiled with github.com/dlclark/regexp2 (lookahead,
// \p{L}, \p{N}, inline (?i:)), the one part a library does right; the
// Qwen, Llama 3 and GPT-2 patterns also have hand-written matchers, ten
// times faster and fuzzed against regexp2 (pretok.go). Anything
// this package does not implement (SentencePiece/Metaspace models,
// byte_fallback, other split behaviours) is refused at load with the field
// named, never tokenized approximately.
//
// The package imports nothing of simbench's.
package tokenizer

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/dlclark/regexp2/v2"
	"golang.org/x/text/unicode/norm"
)

// Tokenizer is a loaded tokenizer. It is safe for concurrent use.
type Tokenizer struct {
	name   string
	forms  []norm.Form        // normalizer sequence
	steps  []step             // pre-tokenizers, in order
	ignore bool               // BPE ignore_merges: a whole piece in the vocab is one token
	vocab  map[string]int32   // raw bytes -> id
	pieces map[int32]string   // id -> raw bytes (vocabulary and added tokens)
	merges map[uint64]mergeTo // (left id, right id) -> merge
	byteID [256]int32
	added  []addedToken // longest first
	first  [256]bool    // the first bytes of added tokens
	config Config

	mu    sync.RWMutex
	cache map[string]cached // piece -> its tokens (at most maxCache)
}

// Config is what tokenizer_config.json says that matters to a benchmark.
type Config struct {
	ChatTemplate   bool   // a chat_template is present (the server applies it)
	TokenizerClass string // e.g. Qwen2TokenizerFast
}

// step is one pre-tokenizer: an optional space prepended to each piece
// that lacks one (ByteLevel add_prefix_space), then an Isolated split by re
// (nil: none), by its hand-written matcher fast when it has one.
type step struct {
	prefix bool
	re     *regexp2.Regexp
	fast   func(s []byte, i int) int
}

type mergeTo struct {
	rank int32
	id   int32
}

type addedToken struct {
	content []byte
	id      int32
}

// maxCache bounds the piece cache (HF keeps 10,000 words too).
const maxCache = 1 << 16

// Name is where the tokenizer was loaded from.
func (t *Tokenizer) Name() string { return t.name }

// Config returns what tokenizer_config.json said (zero without one).
func (t *Tokenizer) Config() Config { return t.config }

// Count returns the number of tokens of text.
func (t *Tokenizer) Count(text []byte) int {
	n := 0
	t.encode(text, func(int32, int) { n++ })
	return n
}

// Encode appends text's token ids to dst.
func (t *Tokenizer) Encode(dst []int32, text []byte) []int32 {
	t.encode(text, func(id int32, _ int) { dst = append(dst, id) })
	return dst
}

// AppendEnds appends, for each token of text, the byte offset in text just
// past the token's last byte: the point at which a stream of text has
// delivered the whole token. Offsets are exact for NFC text (nearly all
// text: IsNormal is checked); for text the normalizer changes they are
// scaled from the normalized text, so they only approximate where each
// token ended. The count is exact either way.
func (t *Tokenizer) AppendEnds(dst []int, text []byte) []int {
	start := len(dst)
	n := t.encode(text, func(_ int32, end int) { dst = append(dst, end) })
	if n != len(text) && n > 0 {
		for i := start; i < len(dst); i++ {
			dst[i] = int(int64(dst[i]) * int64(len(text)) / int64(n))
		}
	}
	return dst
}

// Decode appends the bytes of ids to dst; it reports false for an unknown id.
func (t *Tokenizer) Decode(dst []byte, ids []int32) ([]byte, bool) {
	for _, id := range ids {
		p, ok := t.pieces[id]
		if !ok {
			return dst, false
		}
		dst = append(dst, p...)
	}
	return dst, true
}

// encode calls emit for each token with its id and the end offset of the
// token in the normalized text; it returns the normalized text's length.
func (t *Tokenizer) encode(text []byte, emit func(id int32, end int)) int {
	base := 0
	for len(text) > 0 {
		i, tok := t.nextAdded(text)
		seg := t.normalize(text[:i])
		t.encodeSegment(seg, base, emit)
		base += len(seg)
		if tok == nil {
			break
		}
		base += len(tok.content)
		emit(tok.id, base)
		text = text[i+len(tok.content):]
	}
	return base
}

// nextAdded finds the first added token in text: its offset and the token
// (the longest one at that offset), or len(text), nil.
func (t *Tokenizer) nextAdded(text []byte) (int, *addedToken) {
	if len(t.added) == 0 {
		return len(text), nil
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		if !t.first[c] {
			continue
		}
		for k := range t.added {
			a := &t.added[k]
			if a.content[0] == c && bytes.HasPrefix(text[i:], a.content) {
				return i, a
			}
		}
	}
	return len(text), nil
}

func (t *Tokenizer) normalize(s []byte) []byte {
	for _, f := range t.forms {
		if !f.IsNormal(s) {
			s = f.Bytes(s)
		}
	}
	return s
}

// encodeSegment pre-tokenizes seg (text between added tokens) and BPE-merges
// each piece.
func (t *Tokenizer) encodeSegment(seg []byte, base int, emit func(int32, int)) {
	if len(seg) == 0 {
		return
	}
	t.split(seg, 0, base, emit)
}

// split applies pre-tokenizer k to piece (at offset base of the normalized
// text) and recurses into the next one; past the last it encodes the piece.
func (t *Tokenizer) split(piece []byte, k, base int, emit func(int32, int)) {
	if k == len(t.steps) {
		t.encodePiece(piece, base, emit)
		return
	}
	st := t.steps[k]
	if st.prefix && piece[0] != ' ' {
		// The added space is not in the text: offsets shift back by one
		// (a token ending inside it ends at the piece's start).
		piece = append([]byte{' '}, piece...)
		base--
	}
	switch {
	case st.fast != nil:
		for i := 0; i < len(piece); {
			j := st.fast(piece, i)
			t.split(piece[i:j], k+1, base+i, emit)
			i = j
		}
		return
	case st.re == nil:
		t.split(piece, k+1, base, emit)
		return
	}
	locs, err := st.re.FindAllStringIndex(string(piece), -1)
	if err != nil { // only a match timeout, and none is set
		panic(fmt.Sprintf("tokenizer: pre-tokenizer pattern: %v", err))
	}
	at := 0
	for _, l := range locs {
		if l[0] > at {
			t.split(piece[at:l[0]], k+1, base+at, emit)
		}
		if l[1] > l[0] {
			t.split(piece[l[0]:l[1]], k+1, base+l[0], emit)
		}
		at = l[1]
	}
	if at < len(piece) {
		t.split(piece[at:], k+1, base+at, emit)
	}
}

// encodePiece BPE-merges one pre-token, using the cache.
func (t *Tokenizer) encodePiece(piece []byte, base int, emit func(int32, int)) {
	t.mu.RLock()
	c, ok := t.cache[string(piece)] // no allocation for the lookup
	t.mu.RUnlock()
	if !ok {
		ids, ends := t.bpe(piece)
		c = cached{ids: ids, ends: ends}
		t.mu.Lock()
		if len(t.cache) < maxCache {
			t.cache[string(piece)] = c
		}
		t.mu.Unlock()
	}
	emitPiece(c, base, emit)
}

type cached struct {
	ids  []int32
	ends []int32 // end offset of each token within the piece
}

func emitPiece(c cached, base int, emit func(int32, int)) {
	for i, id := range c.ids {
		emit(id, max(base+int(c.ends[i]), 0))
	}
}
