package tokenizer

// Approx estimates how many tokens a common BPE or SentencePiece
// tokenizer makes of text, without a vocabulary: the one word-count rule of
// simbench. The load generator counts with it when the server's usage is not
// used (--use-server-token-count) and no tokenizer is available; simbench
// serve counts a text prompt with it.
//
// The rule follows what the GPT-style pre-tokenizers split on:
//   - a run of letters (any byte >= 0x80 counts as a letter), with the
//     whitespace before it, is one token per started 10 bytes;
//   - a run of digits is one token per started 3 digits (cl100k, Llama 3);
//   - every other ASCII symbol is a token of its own;
//   - whitespace alone (a chunk of "\n") is one token.
//
// So " the" is 1, " understanding" 2, "Hello, world!" 4, "2024" 2. Any
// non-empty text counts at least 1: servers stream about one token per
// chunk, and a content chunk always carries at least one.
func Approx(text []byte) int {
	n, run, kind := 0, 0, byte(0)
	for _, c := range text {
		k := byteClass[c]
		switch {
		case k == classSpace:
			run, kind = 0, 0
			continue
		case k == classSymbol:
			n++
			run, kind = 0, 0
			continue
		case k != kind:
			run, kind = 0, k
		}
		if run%runLen[k] == 0 {
			n++
		}
		run++
	}
	if n == 0 && len(text) > 0 {
		return 1
	}
	return n
}

const (
	classSymbol = iota
	classSpace
	classLetter
	classDigit
)

// runLen is the bytes per token within a run of each class.
var runLen = [4]int{classSymbol: 1, classSpace: 1, classLetter: 10, classDigit: 3}

var byteClass = func() (t [256]byte) {
	for c := range 256 {
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			t[c] = classSpace
		case c >= '0' && c <= '9':
			t[c] = classDigit
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= 0x80, c == '_':
			t[c] = classLetter
		default:
			t[c] = classSymbol
		}
	}
	return t
}()
