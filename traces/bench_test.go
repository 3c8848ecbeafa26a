package traces

import (
	"os"
	"testing"
)

const fullTrace = "../../shared/traces/conversation_trace.jsonl"

func BenchmarkLoadMooncake(b *testing.B) {
	if _, err := os.Stat(fullTrace); err != nil {
		b.Skip("full trace not available:", err)
	}
	for b.Loop() {
		if _, _, err := LoadMooncake(fullTrace); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDescribe(b *testing.B) {
	if _, err := os.Stat(fullTrace); err != nil {
		b.Skip("full trace not available:", err)
	}
	wl, _, err := LoadMooncake(fullTrace)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		Describe(wl)
	}
}
