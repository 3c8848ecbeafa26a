// Package tinygguf writes small random-weight llama models in GGUF v3, the
// file format llama.cpp and Ollama load, so the real-engine test tier can
// serve a model no one has to download.
//
// A model is fully determined by its Config: the same seed and sizes give a
// byte-identical file. The weights are random (N(0, 0.02), norms 1), so the
// text it writes is noise, but its timing is that of a real llama of that
// size, and two properties make it a load-test model:
//
//   - The vocabulary is SentencePiece-style (tokenizer.ggml.model "llama")
//     with byte fallback, and every word loadgen puts in its text prompts is
//     one token with its leading space ("▁the"), reachable through the
//     bigram merges of the SPM tokenizer. A prompt of N such words is N
//     tokens plus the chat template.
//   - Hidden channel 0 is a constant carrier: token_embd[:,0] = 1 and row 0
//     of every attn_output and ffn_down is 0, so no layer writes to it. The
//     output matrix's column 0 then acts as a per-token logit bias. UNK, BOS,
//     the 256 byte tokens and (unless Config.EOSBias > 0) EOS get a bias of
//     -40 and are never sampled, so a generation runs exactly to max_tokens
//     and every token decodes to non-empty, valid UTF-8: one streamed chunk
//     per token.
//
// The package also reads GGUF (Parse), which its tests use to check what it
// writes, and tokenizes with the SPM algorithm (Vocab.Tokenize) so prompt
// lengths can be checked without an engine.
package tinygguf
