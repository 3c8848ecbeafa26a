package tokenizer_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/unicode/norm"

	"github.com/simbench/simbench/tokenizer"
	"github.com/simbench/simbench/tokenizer/tokenizertest"
)

type golden struct {
	Source string `json:"source"`
	Cases  []struct {
		Text string  `json:"text"`
		IDs  []int32 `json:"ids"`
	} `json:"cases"`
}

// TestQwen3Golden checks every id against the package's own JavaScript
// tokenizer (scripts/testdata/gen_tokenizer_golden.js).
func TestQwen3Golden(t *testing.T) {
	tk := tokenizertest.Qwen3(t)
	data, err := os.ReadFile("testdata/qwen3_golden.json")
	require.NoError(t, err)
	var g golden
	require.NoError(t, json.Unmarshal(data, &g))
	require.Greater(t, len(g.Cases), 300)
	for _, c := range g.Cases {
		got := tk.Encode(nil, []byte(c.Text))
		if len(c.IDs) == 0 {
			c.IDs = nil
		}
		assert.Equal(t, c.IDs, got, "text %q", c.Text)
		assert.Equal(t, len(c.IDs), tk.Count([]byte(c.Text)), "count of %q", c.Text)
	}
}

func TestQwen3Config(t *testing.T) {
	tk := tokenizertest.Qwen3(t)
	assert.True(t, tk.Config().ChatTemplate)
	assert.Equal(t, "Qwen2Tokenizer", tk.Config().TokenizerClass)
}

// TestEndsCoverText: token end offsets rise and the last is the text's end,
// and the tokens decode back to the (NFC) text.
func TestEndsCoverText(t *testing.T) {
	tk := tokenizertest.Qwen3(t)
	for _, s := range []string{"Hello, world!", "你好，世界！ 😀👍🏽", "a  b\n\n c", "<|im_start|>x<|im_end|>y"} {
		ends := tk.AppendEnds(nil, []byte(s))
		require.Len(t, ends, tk.Count([]byte(s)))
		assert.Equal(t, len(s), ends[len(ends)-1], s)
		for i := 1; i < len(ends); i++ {
			assert.Less(t, ends[i-1], ends[i], s)
		}
		dec, ok := tk.Decode(nil, tk.Encode(nil, []byte(s)))
		assert.True(t, ok)
		assert.Equal(t, s, string(dec))
	}
}

func FuzzQwen3(f *testing.F) {
	tk := tokenizertest.Qwen3(f)
	for _, s := range []string{"Hello, world!", "  x", "日本語", "😀", "12345", "it's", "a\r\n\r\nb", "e\u0301"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids := tk.Encode(nil, []byte(s))
		dec, ok := tk.Decode(nil, ids)
		require.True(t, ok)
		require.Equal(t, norm.NFC.String(s), string(dec), "round trip of %q", s)
		ends := tk.AppendEnds(nil, []byte(s))
		require.Len(t, ends, len(ids))
		for i := 1; i < len(ends); i++ {
			require.LessOrEqual(t, ends[i-1], ends[i])
		}
		if len(ends) > 0 {
			require.Equal(t, len(s), ends[len(ends)-1])
		}
	})
}

func TestLoadErrors(t *testing.T) {
	for name, tc := range map[string]struct{ json, want string }{
		"not json":      {`{`, "unexpected end"},
		"no model":      {`{}`, `no "model"`},
		"unigram":       {`{"model":{"type":"Unigram"}}`, `model.type "Unigram"`},
		"byte fallback": {`{"model":{"type":"BPE","byte_fallback":true}}`, "byte_fallback"},
		"metaspace":     {`{"pre_tokenizer":{"type":"Metaspace"},"model":{"type":"BPE"}}`, `pre_tokenizer.type "Metaspace"`},
		"no bytelevel":  {`{"model":{"type":"BPE","vocab":{"a":0}}}`, "no \"ByteLevel\""},
		"removed split": {`{"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"String":" "},"behavior":"Removed"}]},"model":{"type":"BPE"}}`, "pre_tokenizer.pretokenizers[0]: Split behavior \"Removed\""},
		"bad regex":     {`{"pre_tokenizer":{"type":"Split","pattern":{"Regex":"("},"behavior":"Isolated"},"model":{"type":"BPE"}}`, "pre_tokenizer.pattern"},
		"missing bytes": {`{"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{"a":0}}}`, "no token for byte 0x00"},
		"nfkc bad":      {`{"normalizer":{"type":"Lowercase"},"model":{"type":"BPE"}}`, `normalizer.type "Lowercase"`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := tokenizer.Parse([]byte(tc.json))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, err := tokenizer.Load(t.TempDir())
	assert.ErrorContains(t, err, "tokenizer.json")
}

// TestLoadHuggingFaceCache: --tokenizer took a directory holding
// tokenizer.json but not a model's Hugging Face cache directory (issue 41
// item 2); both its snapshot and the cache directory itself now load, at
// the revision refs/main names.
func TestLoadHuggingFaceCache(t *testing.T) {
	src := tokenizertest.Dir(t)
	repo := filepath.Join(t.TempDir(), "models--Qwen--Qwen3-0.6B")
	const rev = "c1899de289a04d12100db370d81485cdf75e47ca"
	snap := filepath.Join(repo, "snapshots", rev)
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "blobs"), 0o755))
	require.NoError(t, os.MkdirAll(snap, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "refs"), 0o755))
	for i, name := range []string{"tokenizer.json", "tokenizer_config.json"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		require.NoError(t, err)
		blob := fmt.Sprintf("blob%d", i)
		require.NoError(t, os.WriteFile(filepath.Join(repo, "blobs", blob), b, 0o644))
		require.NoError(t, os.Symlink(filepath.Join("..", "..", "blobs", blob), filepath.Join(snap, name)))
	}
	require.NoError(t, os.WriteFile(filepath.Join(repo, "refs", "main"), []byte(rev), 0o644))
	for _, dir := range []string{snap, repo} {
		got, err := tokenizer.SnapshotDir(dir)
		require.NoError(t, err, dir)
		assert.Equal(t, snap, got, dir)
	}
	// One whole load, through the cache directory: the slower path.
	text := []byte("Hello, world! 日本語")
	tk, err := tokenizer.Load(repo)
	require.NoError(t, err)
	assert.Equal(t, tokenizertest.Qwen3(t).Encode(nil, text), tk.Encode(nil, text))
	assert.Equal(t, snap, tk.Name())
	require.NoError(t, os.WriteFile(filepath.Join(repo, "refs", "main"), []byte("../x"), 0o644))
	_, err = tokenizer.Load(repo)
	assert.EqualError(t, err, "tokenizer: "+filepath.Join(repo, "refs", "main")+`: "../x" is not a revision`)
}

// FuzzFastSplit checks the hand-written pre-tokenizer matchers against
// regexp2 on their own patterns.
func FuzzFastSplit(f *testing.F) {
	for _, s := range []string{"Hello, world!", "  x  ", "日本語 text", "😀!!\n\n", "12345", "it's I'LL 'RE",
		"a\r\n\r\n b", "\t\tx", " \u3000y", "'hello", "x\n \n", "'", " ", "\u00a0\u00a0z", "a1b2 3.4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, expr := range tokenizer.FastPatterns() {
			want := tokenizer.RegexpSplit(expr, s)
			got := tokenizer.FastSplit(expr, s)
			require.Equal(t, want, got, "pattern %q on %q", expr, s)
		}
	})
}

// TestLoadBoundsTheRead: --tokenizer /dev/zero read until out of memory;
// a device and an oversized file are refused before reading, naming them.
func TestLoadBoundsTheRead(t *testing.T) {
	_, err := tokenizer.Load("/dev/zero")
	assert.EqualError(t, err, "tokenizer: /dev/zero: not a regular file")
	big := filepath.Join(t.TempDir(), "tokenizer.json")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(300<<20)) // sparse: no disk used
	require.NoError(t, f.Close())
	_, err = tokenizer.Load(big)
	assert.EqualError(t, err, "tokenizer: "+big+": 300 MiB, larger than a tokenizer file can be (256 MiB)")
}
