package results

// Chunk is one streamed content chunk: when it arrived and how many output
// tokens it carried. Reasoning tokens are chunks too (AIPerf counts
// reasoning_content as content).
type Chunk struct {
	AtNs   int64 `json:"t"` // arrival time, wall-clock ns (the socket read that delivered it)
	Tokens int   `json:"n"` // tokens in this chunk (>= 1 for a content chunk)
}

// ErrorDetails is AIPerf's ErrorDetails: HTTP status (or 499 for a
// cancellation, 502 for an SSE error event), a type and a message.
type ErrorDetails struct {
	Code    int    `json:"code,omitempty"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Usage is the server-reported token usage (OpenAI `usage`), last non-empty
// value seen on the stream.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
	TotalTokens      int `json:"total_tokens"`
}

// Stage is one part of an exclusive TTFT breakdown. The stages of a request
// partition its TTFT: their durations add up to it exactly.
type Stage struct {
	Name string `json:"stage"`
	Ns   int64  `json:"ns"`
}

// SimDetail is what the simulator knows about a request beyond its client
// timings.
type SimDetail struct {
	QueueWaitNs    int64   `json:"queue_wait_ns"` // engine arrival → first scheduled (the queue_wait stage)
	PrefillStartNs int64   `json:"prefill_start_ns,omitempty"`
	PrefillEndNs   int64   `json:"prefill_end_ns,omitempty"`
	CachedTokens   int     `json:"cached_tokens"`
	Preemptions    int     `json:"preemptions"`
	TTFTBreakdown  []Stage `json:"ttft_breakdown,omitempty"`
	// Disaggregated serving: the prefill and decode workers (the record's
	// Worker is the decode worker) and the KV transfer between them.
	PrefillWorker     string `json:"prefill_worker,omitempty"`
	DecodeWorker      string `json:"decode_worker,omitempty"`
	KVTransferStartNs int64  `json:"kv_transfer_start_ns,omitempty"`
	KVTransferEndNs   int64  `json:"kv_transfer_end_ns,omitempty"`
	KVTransferBytes   int64  `json:"kv_transfer_bytes,omitempty"`
}

// Record is one request of a run, real or simulated. All times are wall-clock
// nanoseconds since the Unix epoch (the simulator uses a fixed virtual epoch).
// A zero time means unknown.
type Record struct {
	ID             string // x_request_id
	SessionNum     int    // AIPerf session_num: 0-based index of the request in send order
	TraceRow       int    // row of the trace this request replays; -1 when none
	ConversationID string
	CorrelationID  string // x_correlation_id: one per session
	Turn           int
	Worker         string // serving worker when known (simulator, or a server header)
	Warmup         bool   // warmup requests are excluded from every metric

	IntendedNs int64 // when the schedule wanted it sent
	StartNs    int64 // when it was actually sent (just before the HTTP write)
	AckNs      int64 // response headers received
	EndNs      int64 // last raw response (may be a usage-only chunk or [DONE]), or the error time

	Chunks       []Chunk // content chunks in arrival order
	NonStreaming bool    // a non-streaming request has no TTFT/ITL metrics

	InputTokens           int // ISL as counted (client, or server with --use-server-token-count)
	OutputTokens          int // output tokens, reasoning excluded
	ReasoningTokens       int
	RequestedOutputTokens int    // max tokens asked for; 0 when not set
	Usage                 *Usage // server usage when reported

	Error       *ErrorDetails
	Cancelled   bool
	CancelledNs int64

	Sim *SimDetail // simulator-only detail
}

// OSL is AIPerf's output_sequence_length: output plus reasoning tokens.
func (r *Record) OSL() int { return r.OutputTokens + r.ReasoningTokens }

// Valid reports whether AIPerf would compute metrics for r: no error and at
// least one content chunk.
func (r *Record) Valid() bool { return r.Error == nil && len(r.Chunks) > 0 }
