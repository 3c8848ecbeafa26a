package results

import (
	"slices"
	"strings"
)

// Kind says how AIPerf treats a metric.
type Kind int

const (
	// KindRecord metrics have one value per valid request and get the full
	// statistics (avg, min, max, p1…p99, std, count, sum).
	KindRecord Kind = iota
	// KindList metrics have a list of values per request, pooled (flattened)
	// across requests before the statistics.
	KindList
	// KindError metrics have one value per failed request.
	KindError
	// KindAggregate metrics are one run-level scalar, written as {unit, avg}.
	KindAggregate
	// KindSession metrics have one value per session (session.go) and get
	// the full statistics.
	KindSession
)

// Def is the definition of one metric: AIPerf's tag, header and display unit.
type Def struct {
	Tag            string
	Header         string
	Unit           string
	Kind           Kind
	LargerIsBetter bool
	// Streaming metrics exist only for streaming requests (AIPerf's
	// STREAMING_TOKENS_ONLY).
	Streaming bool
	// Extension marks metrics simbench adds beside AIPerf's.
	Extension bool
	// Signed metrics can be negative (a difference); all others never are.
	Signed bool
}

// Tags of every metric simbench computes. Each is defined once, in defs.
const (
	TagTTFT              = "time_to_first_token"
	TagTTST              = "time_to_second_token"
	TagRequestLatency    = "request_latency"
	TagITL               = "inter_token_latency"
	TagOTPU              = "output_token_throughput_per_user"
	TagPrefillPerUser    = "prefill_throughput_per_user"
	TagOSL               = "output_sequence_length"
	TagISL               = "input_sequence_length"
	TagOutputTokenCount  = "output_token_count"
	TagReasoningTokens   = "reasoning_token_count"
	TagUsagePrompt       = "usage_prompt_tokens"
	TagUsageCompletion   = "usage_completion_tokens"
	TagUsageTotal        = "usage_total_tokens"
	TagOSLMismatch       = "osl_mismatch_diff_pct"
	TagSendLag           = "send_lag"
	TagTTFTFromIntended  = "time_to_first_token_from_intended"
	TagLatencyIntended   = "request_latency_from_intended"
	TagICL               = "inter_chunk_latency"
	TagTokenGap          = "token_gap"
	TagErrorISL          = "error_isl"
	TagRequestCount      = "request_count"
	TagErrorRequestCount = "error_request_count"
	TagRequestThroughput = "request_throughput"
	TagOutputThroughput  = "output_token_throughput"
	TagTotalThroughput   = "total_token_throughput"
	TagBenchmarkDuration = "benchmark_duration"
	TagTotalISL          = "total_isl"
	TagTotalOSL          = "total_osl"
	TagTotalOutputTokens = "total_output_tokens"
	TagTotalReasoning    = "total_reasoning_tokens"
	TagTotalErrorISL     = "total_error_isl"
	TagGoodput           = "goodput"
	TagGoodRequestCount  = "good_request_count"
	TagAttainment        = "slo_attainment"
	TagTokensPerChunk    = "tokens_per_chunk"
)

// recordID indexes the per-request scalar metrics in RecordMetrics.Values.
type recordID int

// The per-request scalar metrics, in the order AIPerf writes them to
// profile_export.jsonl.
const (
	idOSL recordID = iota
	idISL
	idTTFT
	idOutputTokenCount
	idReasoningTokens
	idTTST
	idRequestLatency
	idPrefillPerUser
	idITL
	idOTPU
	idUsagePrompt
	idUsageCompletion
	idUsageTotal
	idOSLMismatch
	idSendLag
	idTTFTFromIntended
	idLatencyIntended
	idTokensPerChunk
	numRecordMetrics
)

// recordTags maps recordID to tag.
var recordTags = [numRecordMetrics]string{
	idOSL: TagOSL, idISL: TagISL, idTTFT: TagTTFT, idOutputTokenCount: TagOutputTokenCount,
	idReasoningTokens: TagReasoningTokens, idTTST: TagTTST, idRequestLatency: TagRequestLatency,
	idPrefillPerUser: TagPrefillPerUser, idITL: TagITL, idOTPU: TagOTPU,
	idUsagePrompt: TagUsagePrompt, idUsageCompletion: TagUsageCompletion, idUsageTotal: TagUsageTotal,
	idOSLMismatch: TagOSLMismatch, idSendLag: TagSendLag, idTTFTFromIntended: TagTTFTFromIntended,
	idLatencyIntended: TagLatencyIntended, idTokensPerChunk: TagTokensPerChunk,
}

// defs is the single definition of every metric. The order is the order of
// keys in profile_export_aiperf.json: AIPerf's declared fields first, then
// the extras AIPerf appends, then simbench's extensions.
var defs = []Def{
	{Tag: TagRequestThroughput, Header: "Request Throughput", Unit: "requests/sec", Kind: KindAggregate, LargerIsBetter: true},
	{Tag: TagRequestLatency, Header: "Request Latency", Unit: "ms", Kind: KindRecord},
	{Tag: TagRequestCount, Header: "Request Count", Unit: "requests", Kind: KindAggregate, LargerIsBetter: true},
	{Tag: TagTTFT, Header: "Time to First Token", Unit: "ms", Kind: KindRecord, Streaming: true},
	{Tag: TagTTST, Header: "Time to Second Token", Unit: "ms", Kind: KindRecord, Streaming: true},
	{Tag: TagITL, Header: "Inter Token Latency", Unit: "ms", Kind: KindRecord, Streaming: true},
	{Tag: TagOutputThroughput, Header: "Output Token Throughput", Unit: "tokens/sec", Kind: KindAggregate, LargerIsBetter: true},
	{Tag: TagOTPU, Header: "Output Token Throughput Per User", Unit: "tokens/sec/user", Kind: KindRecord, LargerIsBetter: true, Streaming: true},
	{Tag: TagOSL, Header: "Output Sequence Length", Unit: "tokens", Kind: KindRecord, LargerIsBetter: true},
	{Tag: TagISL, Header: "Input Sequence Length", Unit: "tokens", Kind: KindRecord, LargerIsBetter: true},
	{Tag: TagGoodput, Header: "Goodput", Unit: "requests/sec", Kind: KindAggregate, LargerIsBetter: true},
	{Tag: TagGoodRequestCount, Header: "Good Request Count", Unit: "requests", Kind: KindAggregate, LargerIsBetter: true},
	{Tag: TagOutputTokenCount, Header: "Output Token Count", Unit: "tokens", Kind: KindRecord, LargerIsBetter: true},
	{Tag: TagReasoningTokens, Header: "Reasoning Token Count", Unit: "tokens", Kind: KindRecord, LargerIsBetter: true},
	{Tag: "min_request_timestamp", Header: "Minimum Request Timestamp", Unit: "ns", Kind: KindAggregate},
	{Tag: "max_response_timestamp", Header: "Maximum Response Timestamp", Unit: "ns", Kind: KindAggregate},
	{Tag: TagICL, Header: "Inter Chunk Latency", Unit: "ms", Kind: KindList, Streaming: true},
	{Tag: TagTotalOutputTokens, Header: "Total Output Tokens", Unit: "tokens", Kind: KindAggregate, LargerIsBetter: true},
	{Tag: TagTotalReasoning, Header: "Total Reasoning Tokens", Unit: "tokens", Kind: KindAggregate, LargerIsBetter: true},
	{Tag: TagBenchmarkDuration, Header: "Benchmark Duration", Unit: "sec", Kind: KindAggregate},
	{Tag: TagTotalISL, Header: "Total Input Sequence Length", Unit: "tokens", Kind: KindAggregate, LargerIsBetter: true},
	{Tag: TagTotalOSL, Header: "Total Output Sequence Length", Unit: "tokens", Kind: KindAggregate, LargerIsBetter: true},
	{Tag: TagErrorRequestCount, Header: "Error Request Count", Unit: "requests", Kind: KindAggregate},
	{Tag: TagErrorISL, Header: "Error Input Sequence Length", Unit: "tokens", Kind: KindError},
	{Tag: TagTotalErrorISL, Header: "Total Error Input Sequence Length", Unit: "tokens", Kind: KindAggregate},
	{Tag: TagTotalThroughput, Header: "Total Token Throughput", Unit: "tokens/sec", Kind: KindAggregate, LargerIsBetter: true},
	{Tag: "time_to_first_output_token", Header: "Time to First Output Token", Unit: "ms", Kind: KindRecord, Streaming: true},
	{Tag: TagPrefillPerUser, Header: "Prefill Throughput Per User", Unit: "tokens/sec/user", Kind: KindRecord, LargerIsBetter: true, Streaming: true},
	{Tag: "prefill_throughput", Header: "Prefill Throughput", Unit: "tokens/sec", Kind: KindRecord, LargerIsBetter: true, Streaming: true},
	{Tag: TagUsagePrompt, Header: "Usage Prompt Tokens", Unit: "tokens", Kind: KindRecord},
	{Tag: TagUsageCompletion, Header: "Usage Completion Tokens", Unit: "tokens", Kind: KindRecord},
	{Tag: TagUsageTotal, Header: "Usage Total Tokens", Unit: "tokens", Kind: KindRecord},
	{Tag: TagOSLMismatch, Header: "OSL Mismatch Diff", Unit: "%", Kind: KindRecord, Signed: true},
	{Tag: TagTokenGap, Header: "Token Gap", Unit: "ms", Kind: KindList, Streaming: true, Extension: true},
	{Tag: TagSendLag, Header: "Send Lag", Unit: "ms", Kind: KindRecord, Extension: true},
	{Tag: TagTTFTFromIntended, Header: "Time to First Token From Intended Send", Unit: "ms", Kind: KindRecord, Streaming: true, Extension: true},
	{Tag: TagLatencyIntended, Header: "Request Latency From Intended Send", Unit: "ms", Kind: KindRecord, Extension: true},
	// tokens_per_chunk is a streaming request's output tokens (OSL) over
	// its content chunks: 1 when every chunk carries one token, above 1
	// when a server sends several at once (speculative decoding's accepted
	// drafts, a detokenizer or a frontend that batches). AIPerf has none.
	{Tag: TagTokensPerChunk, Header: "Tokens Per Chunk", Unit: "tokens/chunk", Kind: KindRecord, Streaming: true, Extension: true},
	// slo_attainment is good_request_count / (request_count +
	// error_request_count), AIPerf's good_request_fraction under simbench's
	// older name (see Profile.Attainment).
	{Tag: TagAttainment, Header: "SLO Attainment", Unit: "ratio", Kind: KindAggregate, LargerIsBetter: true, Extension: true},
	{Tag: TagSessionLatency, Header: "Session Latency", Unit: "ms", Kind: KindSession, Extension: true},
	{Tag: TagSessionTurns, Header: "Session Turns", Unit: "requests", Kind: KindSession, LargerIsBetter: true, Extension: true},
	{Tag: TagSessionServerWait, Header: "Session Server Wait", Unit: "ms", Kind: KindSession, Extension: true},
	{Tag: TagSessionToolWait, Header: "Session Tool Wait", Unit: "ms", Kind: KindSession, Extension: true},
	// Speculative decoding (specdecode.go), from the server's metrics.
	{Tag: TagSpecDrafts, Header: "Spec Decode Drafts", Unit: "drafts", Kind: KindAggregate, Extension: true},
	{Tag: TagSpecDraftTokens, Header: "Spec Decode Draft Tokens", Unit: "tokens", Kind: KindAggregate, Extension: true},
	{Tag: TagSpecAcceptedTokens, Header: "Spec Decode Accepted Tokens", Unit: "tokens", Kind: KindAggregate, Extension: true},
	{Tag: TagSpecAcceptanceRate, Header: "Spec Decode Acceptance Rate", Unit: "ratio", Kind: KindAggregate, LargerIsBetter: true, Extension: true},
	{Tag: TagSpecMeanAcceptedLength, Header: "Spec Decode Mean Accepted Length", Unit: "tokens", Kind: KindAggregate, LargerIsBetter: true, Extension: true},
	specPosDef,
}

// defIndex maps a tag to its position in defs.
var defIndex = func() map[string]int {
	m := make(map[string]int, len(defs))
	for i, d := range defs {
		m[d.Tag] = i
	}
	return m
}()

// recordIndex maps a scalar per-request tag to its recordID.
var recordIndex = func() map[string]recordID {
	m := make(map[string]recordID, numRecordMetrics)
	for id, tag := range recordTags {
		m[tag] = recordID(id)
	}
	return m
}()

// Lookup returns the definition of tag. Tags simbench does not define (an
// AIPerf export may carry newer ones) get a definition derived from the tag:
// a title-cased header, the given unit, and KindRecord.
func Lookup(tag string) (Def, bool) {
	if i, ok := defIndex[tag]; ok && tag != TagSpecPosPrefix {
		return defs[i], true
	}
	if d, ok := specPosLookup(tag); ok {
		return d, true
	}
	return Def{Tag: tag, Header: titleCase(tag), Kind: KindRecord}, false
}

// Defs returns every metric simbench defines, in file order.
// The per-position acceptance rates are a family of tags
// (SpecPosTag), not listed.
func Defs() []Def {
	return slices.DeleteFunc(slices.Clone(defs), func(d Def) bool { return d.Tag == TagSpecPosPrefix })
}

// order returns the rank of tag in profile_export_aiperf.json; unknown tags
// sort after every known one.
func order(tag string) int {
	if i, ok := defIndex[tag]; ok {
		return i
	}
	if _, ok := SpecPosition(tag); ok {
		return defIndex[TagSpecPosPrefix] // positions keep their order after it
	}
	return len(defs)
}

func titleCase(tag string) string {
	words := strings.Split(tag, "_")
	for i, w := range words {
		if w != "" {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ")
}
