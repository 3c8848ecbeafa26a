package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/simbench/simbench/internal/tinygguf"
	"github.com/simbench/simbench/loadgen"
	"github.com/simbench/simbench/traces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTinyModelWritesGGUF(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.gguf")
	var out, errOut bytes.Buffer
	code := run([]string{"simbench", "tiny-model", "-o", path, "--seed", "7", "--layers", "1",
		"--hidden", "64", "--ff", "96", "--heads", "4", "--kv-heads", "2", "--vocab", "2000", "--eos-bias", "0.5"}, &out, &errOut)
	require.Equal(t, exitOK, code, errOut.String())
	assert.Contains(t, out.String(), "wrote "+path+": llama, 1 layers, hidden 64, vocab 2000")

	fh, err := os.Open(path)
	require.NoError(t, err)
	defer fh.Close()
	f, err := tinygguf.Parse(fh)
	require.NoError(t, err)
	for key, want := range map[string]any{"llama.block_count": uint32(1), "llama.embedding_length": uint32(64),
		"llama.vocab_size": uint32(2000), "llama.attention.head_count_kv": uint32(2)} {
		got, _ := f.Get(key)
		assert.Equal(t, want, got, key)
	}
	outW, err := f.ReadTensor(fh, "output.weight")
	require.NoError(t, err)
	assert.Equal(t, float32(0.5), outW[tinygguf.EOS*64], "EOS bias from --eos-bias")
	assert.Equal(t, float32(-40), outW[tinygguf.BOS*64])
}

func TestTinyModelUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--heads", "5"},   // does not divide hidden
		{"--vocab", "10"},  // below the minimum
		{"extra-argument"}, // no positional arguments
	} {
		var out, errOut bytes.Buffer
		argv := append([]string{"simbench", "tiny-model", "-o", filepath.Join(dir, "x.gguf")}, args...)
		assert.Equal(t, exitUsage, run(argv, &out, &errOut), "%v: %s", args, errOut.String())
	}
	_, err := os.Stat(filepath.Join(dir, "x.gguf"))
	assert.True(t, os.IsNotExist(err), "nothing written on a usage error")
}

func TestTinyModelHiddenFromHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, exitOK, run([]string{"simbench", "--help"}, &out, &errOut))
	assert.NotContains(t, out.String(), "tiny-model")
	out.Reset()
	require.Equal(t, exitOK, run([]string{"simbench", "tiny-model", "--help"}, &out, &errOut))
	assert.Contains(t, out.String(), "Example:")
}

// chatTemplate is the Modelfile TEMPLATE of scripts/engine/lib.sh applied to
// one user message.
func chatTemplate(content string) string {
	return "<|user|>\n" + content + "\n<|assistant|>\n"
}

// TestLoadgenPromptsAreOneTokenPerWord: loadgen's text prompt of N tokens is
// N tokens of the tiny model, plus a template overhead that does not depend
// on N. This is how the e2e tier checks ISL against usage.prompt_tokens.
func TestLoadgenPromptsAreOneTokenPerWord(t *testing.T) {
	v, err := tinygguf.NewVocab(tinygguf.Default().Vocab)
	require.NoError(t, err)
	p := loadgen.Prompts{BlockSize: 512, Seed: 42}
	overhead := -1
	for _, n := range []int{1, 7, 128, 700, 2000} {
		for row := range 3 {
			text := string(p.AppendText(nil, &traces.Request{Row: row, InputLength: n}))
			require.Len(t, v.Tokenize(text), n, "bare prompt of %d words", n)
			got := len(v.Tokenize(chatTemplate(text))) + 1 // + BOS
			if overhead < 0 {
				overhead = got - n
			}
			assert.Equal(t, overhead, got-n, "template overhead at n=%d row %d", n, row)
		}
	}
	t.Logf("chat template overhead: %d tokens (incl. BOS)", overhead)
	assert.Equal(t, tinyTemplateOverhead, overhead)
}

// tinyTemplateOverhead is what usage.prompt_tokens adds to a loadgen prompt
// with the e2e Modelfile: BOS, "<|user|>\n", "\n<|assistant|>\n".
const tinyTemplateOverhead = 15
