package tinygguf

import (
	"strings"
	"testing"

	"github.com/simbench/simbench/internal/promptwords"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVocabShape(t *testing.T) {
	for _, size := range []int{MinVocab(), 4096, 8192} {
		v, err := NewVocab(size)
		require.NoError(t, err)
		require.Len(t, v.Tokens, size)
		require.Len(t, v.Scores, size)
		require.Len(t, v.Types, size)
		seen := map[string]bool{}
		for id, p := range v.Tokens {
			require.False(t, seen[p], "duplicate piece %q", p)
			seen[p] = true
			require.NotEmpty(t, p)
			if v.Types[id] == TokenNormal {
				assert.Equal(t, -float32(id), v.Scores[id])
			}
		}
		assert.Equal(t, []string{"<unk>", "<s>", "</s>", "<0x00>"}, v.Tokens[:4])
		assert.Equal(t, "<0x0A>", v.Tokens[FirstByteToken+'\n'])
		assert.Equal(t, "<0xFF>", v.Tokens[FirstByteToken+255])
		assert.Equal(t, []int32{TokenUnknown, TokenControl, TokenControl, TokenByte}, v.Types[:4])
	}
	_, err := NewVocab(MinVocab() - 1)
	assert.ErrorContains(t, err, "below the minimum")
}

func TestVocabIgnoresSeed(t *testing.T) {
	a, err := NewVocab(4096)
	require.NoError(t, err)
	b, err := NewVocab(4096)
	require.NoError(t, err)
	assert.Equal(t, a.Tokens, b.Tokens)
}

// TestReachableTokensPrintText: every token the model may sample prints as
// non-empty ASCII, so it streams as one chunk of its own.
func TestReachableTokensPrintText(t *testing.T) {
	v, err := NewVocab(4096)
	require.NoError(t, err)
	reachable := 0
	for id := range v.Tokens {
		if v.Unreachable(id, false) {
			continue
		}
		reachable++
		p, err := v.Piece(int32(id))
		require.NoError(t, err)
		require.NotEmpty(t, p)
		for _, c := range []byte(p) {
			require.True(t, c >= ' ' && c <= '~', "token %d %q prints byte %#x", id, v.Tokens[id], c)
		}
	}
	assert.Equal(t, 4096-259, reachable)
	assert.True(t, v.Unreachable(EOS, false))
	assert.False(t, v.Unreachable(EOS, true))
}

func TestTokenizeWords(t *testing.T) {
	v, err := NewVocab(MinVocab())
	require.NoError(t, err)
	for _, w := range promptwords.All() {
		ids := v.Tokenize(w) // the tokenizer prepends "▁"
		require.Len(t, ids, 1, "%q -> %v", w, pieces(v, ids))
		assert.Equal(t, Space+w, v.Tokens[ids[0]])
	}
	text := strings.Join(promptwords.All(), " ")
	assert.Len(t, v.Tokenize(text), promptwords.Count)
}

func TestTokenizeFallback(t *testing.T) {
	v, err := NewVocab(4096)
	require.NoError(t, err)
	tests := map[string][]string{
		"the\nof":  {"▁the", "<0x0A>", "of"},
		"é":        {"▁", "<0xC3>", "<0xA9>"},
		"":         {"▁"},
		"<|user|>": {"▁", "<", "|", "user", "|", ">"},
	}
	for in, want := range tests {
		assert.Equal(t, want, pieces(v, v.Tokenize(in)), "%q", in)
	}
}

func pieces(v *Vocab, ids []int32) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = v.Tokens[id]
	}
	return out
}

func TestWordListsAreDistinct(t *testing.T) {
	seen := map[string]bool{}
	for _, w := range append(promptwords.All(), moreWords[:]...) {
		assert.False(t, seen[w], "word %q listed twice", w)
		seen[w] = true
	}
}
