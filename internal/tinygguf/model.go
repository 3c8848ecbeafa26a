package tinygguf

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// Config sizes a model. The zero value is not valid; start from Default.
type Config struct {
	Seed        uint64  // weights only; the vocabulary depends on Vocab alone
	Layers      int     // transformer blocks
	Hidden      int     // embedding length
	FF          int     // feed-forward length
	Heads       int     // attention heads
	KVHeads     int     // key/value heads (grouped-query attention)
	Vocab       int     // vocabulary size (≥ MinVocab())
	Context     int     // llama.context_length
	EOSBias     float64 // logit bias of EOS in carrier units; ≤ 0: never sampled
	F32         bool    // F32 matrices instead of F16
	RopeBase    float32 // llama.rope.freq_base
	NormEps     float32 // llama.attention.layer_norm_rms_epsilon
	WeightStd   float64 // standard deviation of the random weights
	BlockedBias float64 // logit bias of unreachable tokens (negative)
}

// Default is the "tiny" model of real-engine.md: 16.8M parameters, 34 MB
// in F16, about 200 decode tokens/s on one 2-core CPU through Ollama.
func Default() Config {
	return Config{Seed: 1, Layers: 4, Hidden: 512, FF: 1536, Heads: 8, KVHeads: 4,
		Vocab: 4096, Context: 4096, RopeBase: 10000, NormEps: 1e-5, WeightStd: 0.02,
		BlockedBias: -40}
}

// Validate reports the first inconsistent size.
func (c Config) Validate() error {
	switch {
	case c.Layers < 1 || c.Hidden < 2 || c.FF < 1 || c.Context < 1:
		return fmt.Errorf("layers, hidden (≥ 2), ff and context must be positive: %d, %d, %d, %d",
			c.Layers, c.Hidden, c.FF, c.Context)
	case c.Heads < 1 || c.Hidden%c.Heads != 0:
		return fmt.Errorf("hidden %d must be a multiple of heads %d", c.Hidden, c.Heads)
	case (c.Hidden/c.Heads)%2 != 0:
		return fmt.Errorf("head dimension %d (hidden/heads) must be even for RoPE", c.Hidden/c.Heads)
	case c.KVHeads < 1 || c.Heads%c.KVHeads != 0:
		return fmt.Errorf("heads %d must be a multiple of kv-heads %d", c.Heads, c.KVHeads)
	case c.Vocab < MinVocab():
		return fmt.Errorf("vocab %d is below the minimum %d", c.Vocab, MinVocab())
	case c.WeightStd <= 0 || c.BlockedBias >= 0 || c.RopeBase <= 0 || c.NormEps <= 0:
		return errors.New("weight std, rope base and norm epsilon must be > 0, blocked bias < 0")
	}
	return nil
}

// HeadDim is hidden/heads, also the RoPE dimension.
func (c Config) HeadDim() int { return c.Hidden / c.Heads }

// KVDim is the width of the K and V projections.
func (c Config) KVDim() int { return c.KVHeads * c.HeadDim() }

func (c Config) matrixType() TensorType {
	if c.F32 {
		return F32
	}
	return F16
}

// Model is a generated model ready to be written: metadata, tensor layout
// and a generator for each tensor's values.
type Model struct {
	Config  Config
	Vocab   *Vocab
	Meta    []KV
	Tensors []TensorInfo
	fill    []func(Config, *Vocab, *rand.Rand, []float32)
}

// New lays out the model described by c.
func New(c Config) (*Model, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	v, err := NewVocab(c.Vocab)
	if err != nil {
		return nil, err
	}
	m := &Model{Config: c, Vocab: v}
	m.Meta = metadata(c, v)
	m.layout()
	return m, nil
}

// Params is the number of weights.
func (m *Model) Params() uint64 {
	var n uint64
	for _, t := range m.Tensors {
		n += t.Elements()
	}
	return n
}

// tensor appends a tensor at the next aligned offset.
func (m *Model) tensor(name string, typ TensorType, fill func(Config, *Vocab, *rand.Rand, []float32), shape ...int) {
	var off uint64
	if n := len(m.Tensors); n > 0 {
		last := m.Tensors[n-1]
		off = alignUp(last.Offset + last.Size())
	}
	dims := make([]uint64, len(shape))
	for i, d := range shape {
		dims[i] = uint64(d)
	}
	m.Tensors = append(m.Tensors, TensorInfo{Name: name, Shape: dims, Type: typ, Offset: off})
	m.fill = append(m.fill, fill)
}

func (m *Model) layout() {
	c, mt := m.Config, m.Config.matrixType()
	e, kv, f := c.Hidden, c.KVDim(), c.FF
	m.tensor("token_embd.weight", mt, fillEmbedding, e, c.Vocab)
	for l := range c.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		m.tensor(p+"attn_norm.weight", F32, fillOnes, e)
		m.tensor(p+"attn_q.weight", mt, fillRandom, e, e)
		m.tensor(p+"attn_k.weight", mt, fillRandom, e, kv)
		m.tensor(p+"attn_v.weight", mt, fillRandom, e, kv)
		m.tensor(p+"attn_output.weight", mt, fillNoCarrierRow(e), e, e)
		m.tensor(p+"ffn_norm.weight", F32, fillOnes, e)
		m.tensor(p+"ffn_gate.weight", mt, fillRandom, e, f)
		m.tensor(p+"ffn_up.weight", mt, fillRandom, e, f)
		m.tensor(p+"ffn_down.weight", mt, fillNoCarrierRow(f), f, e)
	}
	m.tensor("output_norm.weight", F32, fillOnes, e)
	m.tensor("output.weight", mt, fillOutput, e, c.Vocab)
}

// tensorRand seeds one generator per tensor from (seed, name), so a
// tensor's values do not depend on the others.
func tensorRand(seed uint64, name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// WriteTo writes the GGUF file; tensors are generated one at a time.
func (m *Model) WriteTo(w io.Writer) (int64, error) {
	e := newEncoder(w)
	e.bytes([]byte(Magic))
	e.u32(Version)
	e.u64(uint64(len(m.Tensors)))
	e.u64(uint64(len(m.Meta)))
	for _, kv := range m.Meta {
		if err := e.kv(kv); err != nil {
			return e.n, err
		}
	}
	for _, t := range m.Tensors {
		e.tensorInfo(t)
	}
	base := alignUp(uint64(e.n))
	e.pad()
	for i, t := range m.Tensors {
		e.bytes(make([]byte, base+t.Offset-uint64(e.n)))
		vals := make([]float32, t.Elements())
		m.fill[i](m.Config, m.Vocab, tensorRand(m.Config.Seed, t.Name), vals)
		e.floats(t.Type, vals)
	}
	e.pad()
	return e.n, e.w.Flush()
}

// WriteFile writes the model to path atomically (temp file, then rename).
func (m *Model) WriteFile(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := m.WriteTo(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
