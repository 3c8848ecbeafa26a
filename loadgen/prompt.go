package loadgen

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/simbench/simbench/internal/promptwords"
	"github.com/simbench/simbench/tokenizer"
	"github.com/simbench/simbench/traces"
)

// Prompts builds each request's prompt from its hash_ids so that equal
// hash_ids give byte-identical prompt blocks: a server's prefix cache then
// sees the reuse the trace recorded. Block j of a request holds BlockSize
// tokens (the last one the remainder of InputLength), drawn from a generator
// seeded by (Seed, hash id): a shorter block is a prefix of the full one, so
// the content never depends on which request materialises a block first.
// Requests without hash_ids get a block of their own, keyed by their row.
//
// Two forms:
//   - token ids (TokenIDs, for /v1/completions on vLLM and SGLang, which
//     accept "prompt": [ids]): exact lengths, ids uniform in [100, VocabSize)
//     so special tokens (ids < 100 in common vocabularies) are avoided;
//   - text: each token is one word from a list of 256 common English words,
//     each a single token, with its leading space, in the GPT-2/cl100k/
//     Llama-3 BPE and Llama-2/Mistral SentencePiece vocabularies. Without a
//     tokenizer the length is therefore approximate: a tokenizer may still
//     merge or split a few words. With one (UseTokenizer) only the words
//     that are one token both with and without their leading space are
//     used; a byte-level BPE pre-tokenizer splits " word" pieces apart, so
//     the user message has exactly InputLength tokens (checked at
//     UseTokenizer). Either way the chat template adds tokens: the run
//     summary compares the intended ISL with the server's
//     usage.prompt_tokens.
//
// A literal prompt from the trace (TextInput) is sent as is.
type Prompts struct {
	TokenIDs  bool
	VocabSize int // token-id mode: ids are in [100, VocabSize)
	BlockSize int // tokens per hash_id block (Workload.BlockSize)
	Seed      int64
	// Tokenizer, set by UseTokenizer, makes text prompts exact and counts
	// literal prompts and output; nil = approximations.
	Tokenizer *tokenizer.Tokenizer
	words     []string // with a tokenizer: the single-token words
}

// minWords is the fewest single-token prompt words UseTokenizer accepts.
const minWords = 64

// UseTokenizer makes text prompts exactly InputLength tokens of tk: it keeps
// the prompt words that tk encodes as one token with and without a leading
// space, and checks that a long prompt of them counts exactly its words.
func (p *Prompts) UseTokenizer(tk *tokenizer.Tokenizer) error {
	var words []string
	for _, w := range promptwords.All() {
		if isLetters(w) && tk.Count([]byte(w)) == 1 && tk.Count([]byte(" "+w)) == 1 {
			words = append(words, w)
		}
	}
	if len(words) < minWords {
		return fmt.Errorf("--tokenizer %s: only %d of the %d prompt words are single tokens (want >= %d): not a tokenizer for English text",
			tk.Name(), len(words), promptwords.Count, minWords)
	}
	q := *p
	q.Tokenizer, q.words = tk, words
	const n = 2000
	var pcg rand.PCG
	pcg.Seed(1, 2)
	if got := tk.Count(q.appendWords(nil, &pcg, n, true)); got != n {
		return fmt.Errorf("--tokenizer %s: a prompt of %d words is %d tokens: its pre-tokenizer joins words, so prompts cannot be exact", tk.Name(), n, got)
	}
	*p = q
	return nil
}

func isLetters(w string) bool {
	for _, c := range []byte(w) {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return w != ""
}

// minTokenID keeps token-id prompts clear of special tokens.
const minTokenID = 100

// rowStream separates a request's own block (no hash_ids) from hash blocks.
const rowStream = 0x5bd1e9955bd1e995

// Validate checks the options.
func (p Prompts) Validate() error {
	if p.BlockSize <= 0 {
		return fmt.Errorf("prompts: block size must be > 0, got %d", p.BlockSize)
	}
	if p.TokenIDs && p.VocabSize <= minTokenID {
		return fmt.Errorf("--vocab-size must be > %d, got %d", minTokenID, p.VocabSize)
	}
	return nil
}

// AppendText appends r's prompt text (JSON-safe words, or TextInput raw).
func (p Prompts) AppendText(dst []byte, r *traces.Request) []byte {
	if r.TextInput != "" {
		return append(dst, r.TextInput...)
	}
	first := true
	p.blocks(r, func(pcg *rand.PCG, n int) {
		dst = p.appendWords(dst, pcg, n, first)
		first = false
	})
	return dst
}

// AppendTokenIDs appends r's prompt as a JSON array of token ids.
func (p Prompts) AppendTokenIDs(dst []byte, r *traces.Request) []byte {
	dst = append(dst, '[')
	span := uint64(p.VocabSize - minTokenID)
	p.blocks(r, func(pcg *rand.PCG, n int) {
		for range n {
			if dst[len(dst)-1] != '[' {
				dst = append(dst, ',')
			}
			dst = strconv.AppendUint(dst, minTokenID+pcg.Uint64()%span, 10)
		}
	})
	return append(dst, ']')
}

// Tokens is the prompt length the client assumes for r: InputLength for
// synthesised prompts; for a literal one the tokenizer's count, else an
// estimate.
func (p Prompts) Tokens(r *traces.Request) int {
	if r.TextInput != "" && p.Tokenizer != nil {
		return p.Tokenizer.Count([]byte(r.TextInput))
	}
	if r.TextInput != "" {
		return tokenizer.Approx([]byte(r.TextInput))
	}
	return r.InputLength
}

// blocks calls gen for each block of r with its seeded generator and size.
func (p Prompts) blocks(r *traces.Request, gen func(pcg *rand.PCG, n int)) {
	var pcg rand.PCG
	if len(r.HashIDs) == 0 {
		pcg.Seed(uint64(p.Seed), rowStream^uint64(r.Row))
		gen(&pcg, r.InputLength)
		return
	}
	left := r.InputLength
	for j, h := range r.HashIDs {
		n := min(p.BlockSize, left)
		if j == len(r.HashIDs)-1 {
			n = left // the last block takes the remainder, as in AIPerf
		}
		pcg.Seed(uint64(p.Seed), uint64(h))
		gen(&pcg, max(n, 0))
		left -= max(n, 0)
	}
}

// appendWords appends n words, each with a leading space except the very
// first word of the prompt.
func (p Prompts) appendWords(dst []byte, pcg *rand.PCG, n int, first bool) []byte {
	var bits uint64
	for i := range n {
		if i%8 == 0 {
			bits = pcg.Uint64()
		}
		if !first || i > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, p.word(byte(bits))...)
		bits >>= 8
	}
	return dst
}

// word is the prompt word for b: from the 256-word list, or with a
// tokenizer from its single-token subset (b scaled to its length).
func (p Prompts) word(b byte) string {
	if p.words != nil {
		return p.words[int(b)*len(p.words)>>8]
	}
	return promptwords.Word(b)
}
