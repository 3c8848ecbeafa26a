package tinygguf

import "fmt"

// metadata lists the GGUF keys llama.cpp and Ollama read for a llama model
// with a SentencePiece tokenizer.
func metadata(c Config, v *Vocab) []KV {
	fileType := uint32(1) // MOSTLY_F16
	if c.F32 {
		fileType = 0 // ALL_F32
	}
	u := func(n int) uint32 { return uint32(n) }
	return []KV{
		{"general.architecture", "llama"},
		{"general.name", "simbench-tiny"},
		{"general.description", fmt.Sprintf("random-weight test model from simbench tiny-model, seed %d, eos-bias %g", c.Seed, c.EOSBias)},
		{"general.file_type", fileType},
		{"general.alignment", uint32(Alignment)},
		{"llama.context_length", u(c.Context)},
		{"llama.embedding_length", u(c.Hidden)},
		{"llama.block_count", u(c.Layers)},
		{"llama.feed_forward_length", u(c.FF)},
		{"llama.attention.head_count", u(c.Heads)},
		{"llama.attention.head_count_kv", u(c.KVHeads)},
		{"llama.rope.dimension_count", u(c.HeadDim())},
		{"llama.rope.freq_base", c.RopeBase},
		{"llama.attention.layer_norm_rms_epsilon", c.NormEps},
		{"llama.vocab_size", u(c.Vocab)},
		{"tokenizer.ggml.model", "llama"},
		{"tokenizer.ggml.tokens", v.Tokens},
		{"tokenizer.ggml.scores", v.Scores},
		{"tokenizer.ggml.token_type", v.Types},
		{"tokenizer.ggml.bos_token_id", uint32(BOS)},
		{"tokenizer.ggml.eos_token_id", uint32(EOS)},
		{"tokenizer.ggml.unknown_token_id", uint32(UNK)},
		{"tokenizer.ggml.padding_token_id", uint32(UNK)},
		{"tokenizer.ggml.add_bos_token", true},
		{"tokenizer.ggml.add_eos_token", false},
	}
}
