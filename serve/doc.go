// Package serve is simbench's simulator behind an OpenAI-compatible HTTP
// endpoint: /v1/chat/completions and /v1/completions (streamed as SSE in
// the chunks vLLM writes, or whole), /v1/models, /health and /metrics (the
// simulated servers' Prometheus families, sim.Online.Metrics).
//
// Each request enters the simulator (sim.Online) when it arrives, virtual
// time held to the wall clock times the speedup, and each token is written
// when the simulated engine emits it. Prompt length is the number of token
// ids, or the text's count by the word-count rule (tokenizer.Approx) plus
// the simulator's frontend.template_tokens; the output is exactly max_tokens
// (or max_completion_tokens) tokens, each a word of the prompt word list:
// the simulated engine has no end-of-sequence token, so ignore_eos is moot.
// A request the simulator can never serve gets the status of its rejection
// (400) before any token.
//
// Not modelled (yet): prefix sharing between requests (each prompt's
// content is its own) and aborting a request whose client went away (the
// simulator finishes it).
//
// Faults (the config's faults: section, LoadConfig) inject HTTP errors,
// cut streams, stalls and slow headers, seeded per request.
package serve
