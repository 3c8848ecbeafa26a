package results

import (
	"math"
	"slices"
)

// Metadata is AIPerf's MetricRecordMetadata: who a request was and when it
// ran. *_ns values are wall-clock nanoseconds.
type Metadata struct {
	SessionNum         int    `json:"session_num"`
	XRequestID         string `json:"x_request_id,omitempty"`
	XCorrelationID     string `json:"x_correlation_id,omitempty"`
	ConversationID     string `json:"conversation_id,omitempty"`
	TurnIndex          int    `json:"turn_index"`
	RequestStartNs     int64  `json:"request_start_ns"`
	RequestAckNs       int64  `json:"request_ack_ns,omitempty"`
	RequestEndNs       int64  `json:"request_end_ns"`
	WorkerID           string `json:"worker_id"`
	RecordProcessorID  string `json:"record_processor_id"`
	BenchmarkPhase     string `json:"benchmark_phase"`
	WasCancelled       bool   `json:"was_cancelled"`
	CancellationTimeNs int64  `json:"cancellation_time_ns,omitempty"`
}

// Extension is what simbench writes beside AIPerf's fields in each JSONL
// line, under the "simbench" key. AIPerf ignores it.
type Extension struct {
	TraceRow              int        `json:"trace_row"`
	IntendedSendNs        int64      `json:"intended_send_ns,omitempty"`
	Worker                string     `json:"worker,omitempty"`
	RequestedOutputTokens int        `json:"requested_output_tokens,omitempty"`
	Usage                 *Usage     `json:"usage,omitempty"`
	Sim                   *SimDetail `json:"sim,omitempty"`
	// ChunkNs holds the content chunks' arrival times exactly: the first
	// chunk's ns after request_start_ns (time_to_first_token), then the ns
	// since the previous chunk for each further one (inter_chunk_latency).
	// It is absent when time_to_first_token or inter_chunk_latency is.
	// ChunkTimesNs reads it instead of summing the ms values back.
	ChunkNs []int64 `json:"chunk_ns,omitempty"`
}

// NamedValue is a per-request metric simbench does not define, kept as read
// from an AIPerf export so its statistics can still be computed.
type NamedValue struct {
	Tag    string
	Unit   string
	Value  float64
	List   []float64 // list-valued metrics
	IsList bool
}

// RecordMetrics is one request's metric values in display units: one line of
// profile_export.jsonl.
type RecordMetrics struct {
	Meta Metadata
	// values and has hold the per-request scalar metrics by recordID.
	values [numRecordMetrics]float64
	has    uint64
	// ICL is inter_chunk_latency (ms): gaps between consecutive content chunks.
	ICL []float64
	// TokenGap is the seed-000 token_gap (ms). nil means equal to ICL (every
	// chunk carried one token). See TokenGaps.
	TokenGap []float64
	// ErrorISL is error_isl for a failed request (0 = unknown).
	ErrorISL int
	Error    *ErrorDetails
	Ext      *Extension
	// Other holds metrics from an AIPerf export that simbench does not define.
	Other []NamedValue
}

// Get returns the value of a per-request scalar metric.
func (m *RecordMetrics) Get(tag string) (float64, bool) {
	id, ok := recordIndex[tag]
	if !ok {
		for _, o := range m.Other {
			if o.Tag == tag && !o.IsList {
				return o.Value, true
			}
		}
		return 0, false
	}
	return m.values[id], m.has&(1<<id) != 0
}

// Set stores a per-request scalar metric; it reports false for a tag that is
// not a scalar per-request metric. Non-finite values are not stored.
func (m *RecordMetrics) Set(tag string, v float64) bool {
	id, ok := recordIndex[tag]
	if !ok {
		return false
	}
	m.set(id, v)
	return true
}

func (m *RecordMetrics) set(id recordID, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	m.values[id] = v
	m.has |= 1 << id
}

func (m *RecordMetrics) get(id recordID) (float64, bool) {
	return m.values[id], m.has&(1<<id) != 0
}

// Valid reports whether the request succeeded (AIPerf: no error).
func (m *RecordMetrics) Valid() bool { return m.Error == nil }

// TokenGaps returns the token_gap list: TokenGap when set, else ICL.
func (m *RecordMetrics) TokenGaps() []float64 {
	if m.TokenGap != nil {
		return m.TokenGap
	}
	return m.ICL
}

// ChunkTimesNs returns the content-chunk arrival times (wall ns): simbench's
// exact chunk_ns when the line has them, else reconstructed from the request
// start, TTFT and the chunk gaps. It returns nil when TTFT is absent.
func (m *RecordMetrics) ChunkTimesNs() []int64 { return m.AppendChunkTimesNs(nil) }

// AppendChunkTimesNs appends ChunkTimesNs to dst (nothing when TTFT is
// absent), so that a streaming reader can reuse one buffer.
func (m *RecordMetrics) AppendChunkTimesNs(dst []int64) []int64 {
	ttft, ok := m.get(idTTFT)
	if !ok {
		return dst
	}
	start := m.Meta.RequestStartNs
	dst = slices.Grow(dst, len(m.ICL)+1)
	if m.Ext != nil && len(m.Ext.ChunkNs) == len(m.ICL)+1 {
		t := start
		for _, d := range m.Ext.ChunkNs {
			t += d
			dst = append(dst, t)
		}
		return dst
	}
	// Without them (AIPerf's files) offsets are summed in ms relative to
	// the start, where float64 keeps sub-ns precision, and only then added
	// to the wall-clock start.
	rel := ttft
	dst = append(dst, start+int64(math.Round(rel*nsPerMs)))
	for _, g := range m.ICL {
		rel += g
		dst = append(dst, start+int64(math.Round(rel*nsPerMs)))
	}
	return dst
}

const nsPerMs = 1e6

// ComputeMetrics applies AIPerf's metric definitions to one record. This is
// the only place per-request metric values are derived from timings.
//
// A record with no error and no content chunk becomes an error record
// (InvalidInferenceResultError), as in AIPerf. Failed and cancelled records
// carry only error_isl.
func ComputeMetrics(r *Record) RecordMetrics {
	m := RecordMetrics{Meta: metadataOf(r), Ext: extensionOf(r)}
	if r.Error == nil && len(r.Chunks) == 0 {
		m.Error = &ErrorDetails{Type: "InvalidInferenceResultError",
			Message: "No responses with actual content were received for the request"}
	} else if r.Error != nil {
		e := *r.Error
		m.Error = &e
	}
	if m.Error != nil {
		m.ErrorISL = r.InputTokens
		return m
	}
	computeCounts(r, &m)
	computeLatencies(r, &m)
	computeUsage(r, &m)
	return m
}

func metadataOf(r *Record) Metadata {
	phase := "profiling"
	if r.Warmup {
		phase = "warmup"
	}
	worker := r.Worker
	if worker == "" {
		worker = "simbench"
	}
	return Metadata{
		SessionNum: r.SessionNum, XRequestID: r.ID, XCorrelationID: r.CorrelationID,
		ConversationID: r.ConversationID, TurnIndex: r.Turn,
		RequestStartNs: r.StartNs, RequestAckNs: r.AckNs, RequestEndNs: r.EndNs,
		WorkerID: worker, RecordProcessorID: "simbench", BenchmarkPhase: phase,
		WasCancelled: r.Cancelled, CancellationTimeNs: r.CancelledNs,
	}
}

func extensionOf(r *Record) *Extension {
	return &Extension{TraceRow: r.TraceRow, IntendedSendNs: r.IntendedNs, Worker: r.Worker,
		RequestedOutputTokens: r.RequestedOutputTokens, Usage: r.Usage, Sim: r.Sim}
}

// computeCounts sets ISL, OSL, output_token_count (0 treated as missing, as
// AIPerf does) and reasoning_token_count.
func computeCounts(r *Record, m *RecordMetrics) {
	m.set(idISL, float64(r.InputTokens))
	m.set(idOSL, float64(r.OSL()))
	if r.OutputTokens > 0 {
		m.set(idOutputTokenCount, float64(r.OutputTokens))
	}
	if r.ReasoningTokens > 0 {
		m.set(idReasoningTokens, float64(r.ReasoningTokens))
	}
	if r.RequestedOutputTokens > 0 {
		req := float64(r.RequestedOutputTokens)
		m.set(idOSLMismatch, (float64(r.OSL())-req)/req*100)
	}
}

// computeLatencies sets the timing metrics.
//
//   - request_latency = last content chunk − start (not stream close).
//   - time_to_first_token = first content chunk − start; time_to_second_token
//     = second − first content chunk (chunks, not tokens).
//   - inter_token_latency = (request_latency − ttft)/(osl − 1), absent when
//     osl < 2; a 0 is kept.
//   - output_token_throughput_per_user = 1/ITL in seconds, absent when ITL = 0.
//   - prefill_throughput_per_user = ISL / TTFT in seconds.
//   - inter_chunk_latency: gaps between consecutive content chunks; a negative
//     gap drops the list for this record (AIPerf logs and skips it).
//   - tokens_per_chunk (simbench's) = osl / content chunks, absent when
//     osl is 0.
func computeLatencies(r *Record, m *RecordMetrics) {
	first, last := r.Chunks[0].AtNs, r.Chunks[len(r.Chunks)-1].AtNs
	latency := float64(last-r.StartNs) / nsPerMs
	m.set(idRequestLatency, latency)
	if r.IntendedNs > 0 {
		m.set(idSendLag, float64(r.StartNs-r.IntendedNs)/nsPerMs)
		m.set(idLatencyIntended, float64(last-r.IntendedNs)/nsPerMs)
	}
	if r.NonStreaming {
		return
	}
	ttft := float64(first-r.StartNs) / nsPerMs
	m.set(idTTFT, ttft)
	if r.IntendedNs > 0 {
		m.set(idTTFTFromIntended, float64(first-r.IntendedNs)/nsPerMs)
	}
	d := Derive(latency, ttft, float64(r.InputTokens), float64(r.OSL()))
	if d.HasPrefill {
		m.set(idPrefillPerUser, d.PrefillPerUser)
	}
	if osl := r.OSL(); osl > 0 {
		m.set(idTokensPerChunk, float64(osl)/float64(len(r.Chunks)))
	}
	if len(r.Chunks) >= 2 {
		m.set(idTTST, float64(r.Chunks[1].AtNs-first)/nsPerMs)
	}
	if d.HasITL {
		m.set(idITL, d.ITL)
	}
	if d.HasOTPU {
		m.set(idOTPU, d.OTPU)
	}
	m.ICL, m.TokenGap = chunkGaps(r.Chunks)
	if m.Ext != nil && (m.ICL != nil || len(r.Chunks) == 1) {
		m.Ext.ChunkNs = chunkNs(r)
	}
}

// Derived are the metrics AIPerf derives from one request's latency and
// TTFT (ms) and its input and output lengths (tokens), each with whether
// it exists: inter_token_latency = (latency − ttft)/(osl − 1), absent when
// osl < 2 (a 0 is kept); output_token_throughput_per_user = 1/ITL in
// seconds, absent when ITL is 0 or absent; prefill_throughput_per_user =
// isl / TTFT in seconds, absent unless both are > 0. Records
// (computeLatencies) and other tools' per-request values (package
// peerruns) take them from here, so the definitions live in one place.
type Derived struct {
	ITL, OTPU, PrefillPerUser   float64
	HasITL, HasOTPU, HasPrefill bool
}

// Derive computes the Derived metrics of one request.
func Derive(latencyMs, ttftMs, isl, osl float64) Derived {
	var d Derived
	if ttftMs > 0 && isl > 0 {
		d.PrefillPerUser, d.HasPrefill = isl/(ttftMs/1e3), true
	}
	if osl >= 2 {
		d.ITL, d.HasITL = (latencyMs-ttftMs)/(osl-1), true
		if d.ITL != 0 {
			d.OTPU, d.HasOTPU = 1/(d.ITL/1e3), true
		}
	}
	return d
}

// chunkNs returns Extension.ChunkNs: the first chunk's time after the
// request start, then each chunk's time after the previous one.
func chunkNs(r *Record) []int64 {
	out := make([]int64, len(r.Chunks))
	prev := r.StartNs
	for i, c := range r.Chunks {
		out[i], prev = c.AtNs-prev, c.AtNs
	}
	return out
}

// chunkGaps returns inter_chunk_latency and token_gap.
//
// token_gap is the pooled per-token gap distribution of seed 000, kept apart
// from ITL: a chunk of k tokens contributes its chunk gap once and k−1 zero
// gaps (its tokens arrived together), and the first chunk's extra tokens add
// zeros too, so a request contributes osl−1 gaps whose mean is its ITL.
//
// Zero-ITL contract (the same as AIPerf's): when every token of a request
// arrives at one instant, its ITL is 0 and stays in the ITL distribution, its
// token gaps are zeros and stay in the token_gap distribution, and it has no
// output_token_throughput_per_user value (1/0 is skipped, never Inf).
//
// tokenGap is nil when it would equal icl (every chunk carried one token).
func chunkGaps(chunks []Chunk) (icl, tokenGap []float64) {
	if len(chunks) < 2 {
		return nil, tokenGapsOf(nil, chunks)
	}
	icl = make([]float64, len(chunks)-1)
	for i := 1; i < len(chunks); i++ {
		d := chunks[i].AtNs - chunks[i-1].AtNs
		if d < 0 {
			return nil, nil
		}
		icl[i-1] = float64(d) / nsPerMs
	}
	return icl, tokenGapsOf(icl, chunks)
}

func tokenGapsOf(icl []float64, chunks []Chunk) []float64 {
	multi := false
	for _, c := range chunks {
		if c.Tokens > 1 {
			multi = true
			break
		}
	}
	if !multi {
		return nil
	}
	out := make([]float64, 0, len(chunks)*2)
	for i, c := range chunks {
		if i > 0 {
			out = append(out, icl[i-1])
		}
		for k := 1; k < c.Tokens; k++ {
			out = append(out, 0)
		}
	}
	return out
}

func computeUsage(r *Record, m *RecordMetrics) {
	if r.Usage == nil {
		return
	}
	m.set(idUsagePrompt, float64(r.Usage.PromptTokens))
	m.set(idUsageCompletion, float64(r.Usage.CompletionTokens))
	m.set(idUsageTotal, float64(r.Usage.TotalTokens))
}
