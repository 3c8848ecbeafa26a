package tinygguf

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// small is a fast model with every feature of the default one.
func small() Config {
	c := Default()
	c.Layers, c.Hidden, c.FF, c.Heads, c.KVHeads = 2, 64, 96, 4, 2
	c.Vocab = MinVocab() + 300
	c.Context = 256
	return c
}

func write(t *testing.T, c Config) ([]byte, *File) {
	t.Helper()
	m, err := New(c)
	require.NoError(t, err)
	var buf bytes.Buffer
	n, err := m.WriteTo(&buf)
	require.NoError(t, err)
	require.EqualValues(t, buf.Len(), n)
	f, err := Parse(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	return buf.Bytes(), f
}

func TestMetadataRoundTrip(t *testing.T) {
	c := small()
	_, f := write(t, c)
	assert.EqualValues(t, 3, f.Version)
	want := map[string]any{
		"general.architecture":                   "llama",
		"general.alignment":                      uint32(32),
		"general.file_type":                      uint32(1),
		"llama.context_length":                   uint32(256),
		"llama.embedding_length":                 uint32(64),
		"llama.block_count":                      uint32(2),
		"llama.feed_forward_length":              uint32(96),
		"llama.attention.head_count":             uint32(4),
		"llama.attention.head_count_kv":          uint32(2),
		"llama.rope.dimension_count":             uint32(16),
		"llama.rope.freq_base":                   float32(10000),
		"llama.attention.layer_norm_rms_epsilon": float32(1e-5),
		"llama.vocab_size":                       uint32(c.Vocab),
		"tokenizer.ggml.model":                   "llama",
		"tokenizer.ggml.bos_token_id":            uint32(1),
		"tokenizer.ggml.eos_token_id":            uint32(2),
		"tokenizer.ggml.unknown_token_id":        uint32(0),
		"tokenizer.ggml.padding_token_id":        uint32(0),
		"tokenizer.ggml.add_bos_token":           true,
		"tokenizer.ggml.add_eos_token":           false,
	}
	for k, v := range want {
		got, ok := f.Get(k)
		require.True(t, ok, k)
		assert.Equal(t, v, got, k)
	}
	v, err := NewVocab(c.Vocab)
	require.NoError(t, err)
	tokens, _ := f.Get("tokenizer.ggml.tokens")
	scores, _ := f.Get("tokenizer.ggml.scores")
	types, _ := f.Get("tokenizer.ggml.token_type")
	assert.Equal(t, v.Tokens, tokens)
	assert.Equal(t, v.Scores, scores)
	assert.Equal(t, v.Types, types)
}

func TestTensorLayout(t *testing.T) {
	for _, f32 := range []bool{false, true} {
		t.Run(fmt.Sprint("f32=", f32), func(t *testing.T) {
			c := small()
			c.F32 = f32
			raw, f := write(t, c)
			checkShapes(t, c, f)
			checkOffsets(t, f, int64(len(raw)))
		})
	}
}

func checkShapes(t *testing.T, c Config, f *File) {
	mt := F16
	if c.F32 {
		mt = F32
	}
	e, kv, ff, v := uint64(c.Hidden), uint64(c.KVDim()), uint64(c.FF), uint64(c.Vocab)
	want := map[string]TensorInfo{
		"token_embd.weight":  {Shape: []uint64{e, v}, Type: mt},
		"output_norm.weight": {Shape: []uint64{e}, Type: F32},
		"output.weight":      {Shape: []uint64{e, v}, Type: mt},
	}
	for l := range c.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		want[p+"attn_norm.weight"] = TensorInfo{Shape: []uint64{e}, Type: F32}
		want[p+"ffn_norm.weight"] = TensorInfo{Shape: []uint64{e}, Type: F32}
		want[p+"attn_q.weight"] = TensorInfo{Shape: []uint64{e, e}, Type: mt}
		want[p+"attn_k.weight"] = TensorInfo{Shape: []uint64{e, kv}, Type: mt}
		want[p+"attn_v.weight"] = TensorInfo{Shape: []uint64{e, kv}, Type: mt}
		want[p+"attn_output.weight"] = TensorInfo{Shape: []uint64{e, e}, Type: mt}
		want[p+"ffn_gate.weight"] = TensorInfo{Shape: []uint64{e, ff}, Type: mt}
		want[p+"ffn_up.weight"] = TensorInfo{Shape: []uint64{e, ff}, Type: mt}
		want[p+"ffn_down.weight"] = TensorInfo{Shape: []uint64{ff, e}, Type: mt}
	}
	require.Len(t, f.Tensors, len(want))
	for _, ti := range f.Tensors {
		w, ok := want[ti.Name]
		require.True(t, ok, "unexpected tensor %s", ti.Name)
		assert.Equal(t, w.Shape, ti.Shape, ti.Name)
		assert.Equal(t, w.Type, ti.Type, ti.Name)
	}
}

func checkOffsets(t *testing.T, f *File, fileLen int64) {
	assert.Zero(t, f.DataOffset%Alignment, "data section alignment")
	end := uint64(0)
	for _, ti := range f.Tensors {
		assert.Zero(t, ti.Offset%Alignment, "%s offset %d", ti.Name, ti.Offset)
		assert.GreaterOrEqual(t, ti.Offset, end, "%s overlaps the previous tensor", ti.Name)
		end = ti.Offset + ti.Size()
	}
	assert.Equal(t, f.DataOffset+int64(alignUp(end)), fileLen, "file ends after the last tensor, padded")
}

func TestBiasRow(t *testing.T) {
	for _, eos := range []float64{0, -1, 0.5} {
		t.Run(fmt.Sprint("eos-bias=", eos), func(t *testing.T) {
			c := small()
			c.EOSBias = eos
			raw, f := write(t, c)
			out, err := f.ReadTensor(bytes.NewReader(raw), "output.weight")
			require.NoError(t, err)
			v, err := NewVocab(c.Vocab)
			require.NoError(t, err)
			for id := range c.Vocab {
				assert.Equal(t, float32(wantBias(v, id, eos)), out[id*c.Hidden], "token %d %q", id, v.Tokens[id])
			}
		})
	}
}

// wantBias restates the rule independently of Bias.
func wantBias(v *Vocab, id int, eos float64) float64 {
	switch {
	case id == EOS && eos > 0:
		return eos
	case id == UNK || id == BOS || id == EOS:
		return -40
	case id >= FirstByteToken && id < FirstByteToken+256:
		return -40
	}
	return 0
}

func TestCarrierChannel(t *testing.T) {
	c := small()
	raw, f := write(t, c)
	r := bytes.NewReader(raw)
	embd, err := f.ReadTensor(r, "token_embd.weight")
	require.NoError(t, err)
	for id := range c.Vocab {
		require.Equal(t, float32(1), embd[id*c.Hidden], "token_embd[%d][0]", id)
	}
	for l := range c.Layers {
		for name, in := range map[string]int{"attn_output": c.Hidden, "ffn_down": c.FF} {
			w, err := f.ReadTensor(r, fmt.Sprintf("blk.%d.%s.weight", l, name))
			require.NoError(t, err)
			assert.Equal(t, make([]float32, in), w[:in], "%s row 0 writes to the carrier", name)
			assert.InDelta(t, c.WeightStd, stddev(w[in:]), 0.002, "%s random part", name)
		}
	}
	norm, err := f.ReadTensor(r, "output_norm.weight")
	require.NoError(t, err)
	for _, x := range norm {
		require.Equal(t, float32(1), x)
	}
}

func stddev(xs []float32) float64 {
	var s, s2 float64
	for _, x := range xs {
		s += float64(x)
		s2 += float64(x) * float64(x)
	}
	n := float64(len(xs))
	return math.Sqrt(s2/n - (s/n)*(s/n))
}

func TestDeterministic(t *testing.T) {
	c := small()
	a, _ := write(t, c)
	b, _ := write(t, c)
	assert.True(t, bytes.Equal(a, b), "same config, same bytes")
	c.Seed++
	d, fd := write(t, c)
	assert.Equal(t, len(a), len(d))
	assert.False(t, bytes.Equal(a[fd.DataOffset:], d[fd.DataOffset:]), "another seed, other weights")
}

func TestValidate(t *testing.T) {
	tests := map[string]func(*Config){
		"heads do not divide hidden": func(c *Config) { c.Heads = 5 },
		"kv heads do not divide":     func(c *Config) { c.KVHeads = 3 },
		"odd head dim":               func(c *Config) { c.Hidden, c.Heads = 60, 4 },
		"vocab too small":            func(c *Config) { c.Vocab = MinVocab() - 1 },
		"no layers":                  func(c *Config) { c.Layers = 0 },
		"positive blocked bias":      func(c *Config) { c.BlockedBias = 1 },
	}
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			c := small()
			mutate(&c)
			_, err := New(c)
			assert.Error(t, err)
		})
	}
	assert.NoError(t, Default().Validate())
	medium := Default() // real-engine.md's slower model
	medium.Layers, medium.Hidden, medium.FF, medium.Heads, medium.KVHeads, medium.Vocab = 8, 1024, 2816, 16, 4, 8192
	m, err := New(medium)
	require.NoError(t, err)
	assert.InDelta(t, 107e6, float64(m.Params()), 1e6, "the 107M-parameter medium model")
}

func TestDefaultSize(t *testing.T) {
	m, err := New(Default())
	require.NoError(t, err)
	assert.EqualValues(t, 16_781_824, m.Params(), "the 16.8M-parameter tiny model of real-engine.md")
}

func TestParseErrors(t *testing.T) {
	raw, _ := write(t, small())
	header := raw[:1000]
	_, err := Parse(bytes.NewReader(append([]byte("GGUX"), raw[4:]...)))
	assert.ErrorContains(t, err, "bad magic")
	for _, n := range []int{0, 3, 10, 23, 40, 200, 999} {
		_, err := Parse(bytes.NewReader(header[:n]))
		assert.Error(t, err, "truncated at %d", n)
	}
	bad := bytes.Clone(raw)
	bad[4] = 9
	_, err = Parse(bytes.NewReader(bad))
	assert.ErrorContains(t, err, "unsupported version 9")
}

func FuzzParse(f *testing.F) {
	c := small()
	c.Layers = 1
	m, _ := New(c)
	var buf bytes.Buffer
	_, _ = m.WriteTo(&buf)
	f.Add(buf.Bytes()[:4096])
	f.Fuzz(func(t *testing.T, data []byte) {
		if f, err := Parse(bytes.NewReader(data)); err == nil {
			require.NotNil(t, f)
		}
	})
}
