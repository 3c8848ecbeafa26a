package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// The pre-tokenizer patterns of the common byte-level BPE families get a
// hand-written matcher: regexp2 (a backtracking engine over runes) took
// three quarters of the encoding time. Each matcher returns where the
// pattern's match starting at i ends, exactly as regexp2 does (FuzzFastSplit
// checks it against regexp2 on the same pattern); any other pattern is left
// to regexp2.
const (
	// qwenPattern is Qwen2/Qwen3's Split pattern; llama3Pattern (also
	// cl100k's) differs only in \p{N}{1,3}.
	qwenPattern   = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	llama3Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// fastMatcher returns the hand-written matcher for expr, or nil.
func fastMatcher(expr string) func(s []byte, i int) int {
	switch expr {
	case qwenPattern:
		return func(s []byte, i int) int { return matchCL100K(s, i, 1) }
	case llama3Pattern:
		return func(s []byte, i int) int { return matchCL100K(s, i, 3) }
	case gpt2Pattern:
		return matchGPT2
	}
	return nil
}

// matchCL100K matches the Qwen/Llama 3 pattern at i (digits: the longest
// run of \p{N} one match takes). Its alternatives, in order:
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d) | [^\r\n\p{L}\p{N}]?\p{L}+ | \p{N}{1,digits} |
//	 ?[^\s\p{L}\p{N}]+[\r\n]* | \s*[\r\n]+ | \s+(?!\S) | \s+
func matchCL100K(s []byte, i, digits int) int {
	r, n := runeAt(s, i)
	if r == '\'' {
		if e := contraction(s, i+1, true); e > 0 {
			return e
		}
	}
	if isL(r) {
		return runOf(s, i+n, isL)
	}
	if r != '\r' && r != '\n' && !isN(r) && i+n < len(s) {
		if r2, _ := runeAt(s, i+n); isL(r2) {
			return runOf(s, i+n, isL)
		}
	}
	if isN(r) {
		j := i + n
		for k := 1; k < digits && j < len(s); k++ {
			r2, n2 := runeAt(s, j)
			if !isN(r2) {
				break
			}
			j += n2
		}
		return j
	}
	if j, ok := spaceThenOther(s, i, r, n); ok {
		for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
			j++
		}
		return j
	}
	end, lastNL := i, -1
	for end < len(s) {
		r2, n2 := runeAt(s, end)
		if !unicode.IsSpace(r2) {
			break
		}
		if r2 == '\r' || r2 == '\n' {
			lastNL = end
		}
		end += n2
	}
	if lastNL >= 0 {
		return lastNL + 1 // \s*[\r\n]+ backs off to the last line break
	}
	return spaceRunEnd(s, i, end)
}

// matchGPT2 matches ByteLevel's own pattern at i:
//
//	's|'t|'re|'ve|'m|'ll|'d | ?\p{L}+ | ?\p{N}+ | ?[^\s\p{L}\p{N}]+ | \s+(?!\S) | \s+
func matchGPT2(s []byte, i int) int {
	r, n := runeAt(s, i)
	if r == '\'' {
		if e := contraction(s, i+1, false); e > 0 {
			return e
		}
	}
	j, r2 := i, r
	if r == ' ' && i+1 < len(s) {
		j = i + 1
		r2, _ = runeAt(s, j)
	}
	switch {
	case isL(r2):
		return runOf(s, j, isL)
	case isN(r2):
		return runOf(s, j, isN)
	}
	if j, ok := spaceThenOther(s, i, r, n); ok {
		return j
	}
	return spaceRunEnd(s, i, runOf(s, i, unicode.IsSpace))
}

// spaceThenOther matches ` ?[^\s\p{L}\p{N}]+` at i (r, n: the rune there).
func spaceThenOther(s []byte, i int, r rune, n int) (int, bool) {
	j := i
	if r == ' ' {
		if i+1 >= len(s) {
			return 0, false
		}
		j++
		r, n = runeAt(s, j)
	}
	if !isOther(r) {
		return 0, false
	}
	return runOf(s, j+n, isOther), true
}

// spaceRunEnd is where `\s+(?!\S)|\s+` ends for the whitespace run [i, end):
// the whole run at the end of the text, else all but its last character
// (which then starts the next piece) unless that leaves nothing.
func spaceRunEnd(s []byte, i, end int) int {
	if end == len(s) {
		return end
	}
	_, last := utf8.DecodeLastRune(s[i:end])
	if end-last > i {
		return end - last
	}
	return end
}

// contraction matches 's 't 're 've 'm 'll 'd after the apostrophe (at j),
// ASCII case-insensitively when fold, and returns the end or 0.
func contraction(s []byte, j int, fold bool) int {
	for _, suf := range [...]string{"s", "t", "re", "ve", "m", "ll", "d"} {
		if j+len(suf) > len(s) {
			continue
		}
		ok := true
		for k := 0; k < len(suf) && ok; k++ {
			c := s[j+k]
			ok = c == suf[k] || fold && c == suf[k]-('a'-'A')
		}
		if ok {
			return j + len(suf)
		}
	}
	return 0
}

// runOf returns the end of the run of runes in class from j.
func runOf(s []byte, j int, class func(rune) bool) int {
	for j < len(s) {
		r, n := runeAt(s, j)
		if !class(r) {
			break
		}
		j += n
	}
	return j
}

func runeAt(s []byte, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRune(s[i:])
}

func isL(r rune) bool {
	if r < utf8.RuneSelf {
		return r|0x20 >= 'a' && r|0x20 <= 'z'
	}
	return unicode.IsLetter(r)
}

func isN(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= '0' && r <= '9'
	}
	return unicode.IsNumber(r)
}

func isOther(r rune) bool { return !unicode.IsSpace(r) && !isL(r) && !isN(r) }
