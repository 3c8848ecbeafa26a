package tokenizer

import (
	"sync"

	"github.com/dlclark/regexp2/v2"
)

var compiled sync.Map // expr -> *regexp2.Regexp

// FastPatterns are the patterns with a hand-written matcher.
func FastPatterns() []string { return []string{qwenPattern, llama3Pattern, gpt2Pattern} }

// RegexpSplit returns the match ends of expr on s by regexp2.
func RegexpSplit(expr, s string) []int {
	re, ok := compiled.Load(expr)
	if !ok {
		re, _ = compiled.LoadOrStore(expr, regexp2.MustCompile(expr, regexp2.None))
	}
	locs, err := re.(*regexp2.Regexp).FindAllStringIndex(s, -1)
	if err != nil {
		panic(err)
	}
	var out []int
	at := 0
	for _, l := range locs {
		if l[0] > at {
			out = append(out, l[0]) // a gap: its own piece
		}
		out = append(out, l[1])
		at = l[1]
	}
	if at < len(s) {
		out = append(out, len(s))
	}
	return out
}

// FastSplit returns the match ends of expr's matcher on s.
func FastSplit(expr, s string) []int {
	m := fastMatcher(expr)
	var out []int
	for i := 0; i < len(s); {
		i = m([]byte(s), i)
		out = append(out, i)
	}
	return out
}

// SnapshotDir is snapshotDir, for tests of the resolution alone.
var SnapshotDir = snapshotDir
