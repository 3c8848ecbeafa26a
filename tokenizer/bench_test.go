package tokenizer_test

import (
	"strings"
	"testing"

	"github.com/simbench/simbench/tokenizer/tokenizertest"
)

// BenchmarkCount reports the cost per token of counting a response-sized
// text (the cache warm, as it is after the first requests of a run).
func BenchmarkCount(b *testing.B) {
	tk := tokenizertest.Qwen3(b)
	for name, text := range map[string]string{
		"english": strings.Repeat("The quick brown fox jumps over the lazy dog, and then it runs 42 miles. ", 20),
		"cjk":     strings.Repeat("我喜欢自然语言处理，这是一个测试。", 20),
		"code":    strings.Repeat("func main() {\n\tfmt.Println(\"hi\", x+1)\n}\n", 20),
	} {
		b.Run(name, func(b *testing.B) {
			n := tk.Count([]byte(text))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				tk.Count([]byte(text))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/token")
		})
	}
}
