package results

import (
	"io"
	"strings"
)

// Servers whose metric families simbench knows.
const (
	ServerDynamo   = "dynamo"
	ServerVLLM     = "vllm"
	ServerSGLang   = "sglang"
	ServerLlamaCpp = "llama.cpp"
)

// ServerMetricInfo is one entry of the common server-metrics vocabulary:
// a quantity and the families that expose it on each server.
type ServerMetricInfo struct {
	Name     string // the common name
	Kind     MetricKind
	Unit     string
	Meaning  string
	Families []FamilySource
	// Combine says how series of several instances or label sets add up:
	// "sum" (requests running, tokens) or "mean" (ratios); "" for a family
	// whose label sets must not be combined (TTFT stages: they are compared
	// stage by stage in the TTFT breakdown).
	Combine string
}

// FamilySource is one server's family for a common metric.
type FamilySource struct {
	Server string
	Family string // as AIPerf's export keys it: counters without their _total suffix
}

// ServerMetricVocabulary is the table of known server metric families,
// mapped to one vocabulary so runs against different servers (and the
// simulator, which exposes the same families) line up. Names come from the
// servers' metric documentation: Dynamo's frontend metrics catalogue
// (lib/runtime/src/metrics/prometheus_names.rs), vLLM's V1 metrics
// (vllm/v1/metrics/loggers.py), SGLang's (python/sglang/srt/metrics/
// collector.py) and llama.cpp's server (/metrics with --metrics). The README
// prints the same table.
func ServerMetricVocabulary() []ServerMetricInfo {
	h, g, c := KindHistogram, KindGauge, KindCounter
	return []ServerMetricInfo{
		{"ttft", h, "seconds", "time to first token as the server measures it", []FamilySource{
			{ServerDynamo, "dynamo_frontend_time_to_first_token_seconds"},
			{ServerVLLM, "vllm:time_to_first_token_seconds"},
			{ServerSGLang, "sglang:time_to_first_token_seconds"}}, "sum"},
		{"ttft_stage", h, "seconds", "exclusive TTFT stage durations (labels stage, phase): the stages partition TTFT", []FamilySource{
			{ServerDynamo, "dynamo_frontend_ttft_stage_seconds"}}, ""},
		{"itl", h, "seconds", "inter-token latency", []FamilySource{
			{ServerDynamo, "dynamo_frontend_inter_token_latency_seconds"},
			{ServerVLLM, "vllm:inter_token_latency_seconds"},
			{ServerVLLM, "vllm:time_per_output_token_seconds"},
			{ServerSGLang, "sglang:inter_token_latency_seconds"}}, "sum"},
		{"request_latency", h, "seconds", "end-to-end request latency", []FamilySource{
			{ServerDynamo, "dynamo_frontend_request_duration_seconds"},
			{ServerVLLM, "vllm:e2e_request_latency_seconds"},
			{ServerSGLang, "sglang:e2e_request_latency_seconds"}}, "sum"},
		{"queue_time", h, "seconds", "time a request waits in the engine queue before it is first scheduled", []FamilySource{
			{ServerVLLM, "vllm:request_queue_time_seconds"},
			{ServerSGLang, "sglang:queue_time_seconds"}}, "sum"},
		{"prefill_time", h, "seconds", "first scheduled → first token (prefill, including time behind other work)", []FamilySource{
			{ServerVLLM, "vllm:request_prefill_time_seconds"}}, "sum"},
		{"decode_time", h, "seconds", "first token → last token", []FamilySource{
			{ServerVLLM, "vllm:request_decode_time_seconds"}}, "sum"},
		{"input_tokens", h, "tokens", "prompt length per request", []FamilySource{
			{ServerDynamo, "dynamo_frontend_input_sequence_tokens"},
			{ServerVLLM, "vllm:request_prompt_tokens"}}, "sum"},
		{"output_tokens", h, "tokens", "output length per request", []FamilySource{
			{ServerDynamo, "dynamo_frontend_output_sequence_tokens"},
			{ServerVLLM, "vllm:request_generation_tokens"}}, "sum"},
		{"requests_running", g, "requests", "requests in the running batch", []FamilySource{
			{ServerVLLM, "vllm:num_requests_running"},
			{ServerSGLang, "sglang:num_running_reqs"},
			{ServerLlamaCpp, "llamacpp:requests_processing"}}, "sum"},
		{"requests_waiting", g, "requests", "requests queued, not yet scheduled", []FamilySource{
			{ServerDynamo, "dynamo_frontend_queued_requests"},
			{ServerVLLM, "vllm:num_requests_waiting"},
			{ServerSGLang, "sglang:num_queue_reqs"},
			{ServerLlamaCpp, "llamacpp:requests_deferred"}}, "sum"},
		{"requests_inflight", g, "requests", "requests between arrival and completion at the frontend", []FamilySource{
			{ServerDynamo, "dynamo_frontend_inflight_requests"}}, "sum"},
		{"kv_cache_usage", g, "ratio", "share of KV-cache blocks (tokens) in use, 0–1", []FamilySource{
			{ServerVLLM, "vllm:kv_cache_usage_perc"},
			{ServerVLLM, "vllm:gpu_cache_usage_perc"},
			{ServerSGLang, "sglang:token_usage"},
			{ServerLlamaCpp, "llamacpp:kv_cache_usage_ratio"}}, "mean"},
		{"prefix_cache_queries", c, "tokens", "prompt tokens looked up in the prefix cache", []FamilySource{
			{ServerVLLM, "vllm:prefix_cache_queries"},
			{ServerVLLM, "vllm:gpu_prefix_cache_queries"}}, "sum"},
		{"prefix_cache_hits", c, "tokens", "prompt tokens found in the prefix cache", []FamilySource{
			{ServerVLLM, "vllm:prefix_cache_hits"},
			{ServerVLLM, "vllm:gpu_prefix_cache_hits"},
			{ServerSGLang, "sglang:cached_tokens"}}, "sum"},
		{"prompt_tokens", c, "tokens", "prompt tokens processed", []FamilySource{
			{ServerVLLM, "vllm:prompt_tokens"},
			{ServerSGLang, "sglang:prompt_tokens"},
			{ServerLlamaCpp, "llamacpp:prompt_tokens"}}, "sum"},
		{"generation_tokens", c, "tokens", "output tokens generated", []FamilySource{
			{ServerVLLM, "vllm:generation_tokens"},
			{ServerSGLang, "sglang:generation_tokens"},
			{ServerLlamaCpp, "llamacpp:tokens_predicted"}}, "sum"},
		{"requests_finished", c, "requests", "requests finished, by status or finish reason", []FamilySource{
			{ServerDynamo, "dynamo_frontend_requests"},
			{ServerVLLM, "vllm:request_success"}}, "sum"},
		{"preemptions", c, "count", "requests preempted (swapped out or recomputed)", []FamilySource{
			{ServerVLLM, "vllm:num_preemptions"}}, "sum"},
	}
}

// LookupServerFamily finds the common metric a family belongs to; a
// counter may be named with or without its _total suffix.
func LookupServerFamily(family string) (info ServerMetricInfo, server string, ok bool) {
	for _, m := range ServerMetricVocabulary() {
		for _, f := range m.Families {
			if f.Family == family || m.Kind == KindCounter && f.Family+"_total" == family {
				return m, f.Server, true
			}
		}
	}
	return ServerMetricInfo{}, "", false
}

// BreakdownSource is a way to break a server's TTFT into stages: the TTFT
// histogram, and either one family labelled by stage (and phase) or one
// family per stage. Exclusive sources partition TTFT by construction;
// the others cover only part of it.
type BreakdownSource struct {
	Server     string
	TTFTFamily string
	// StageFamily is labelled by StageLabel and PhaseLabel.
	StageFamily, StageLabel, PhaseLabel string
	// Stages are unlabelled families, one per stage, in TTFT order.
	Stages    []StageFamily
	Exclusive bool
	// Uncovered says what part of TTFT a non-exclusive source leaves out.
	Uncovered string
}

// StageFamily names one stage's histogram.
type StageFamily struct {
	Stage, Family string
}

// BreakdownSources lists the known TTFT breakdowns, best first.
func BreakdownSources() []BreakdownSource {
	return []BreakdownSource{
		{Server: ServerDynamo, TTFTFamily: "dynamo_frontend_time_to_first_token_seconds",
			StageFamily: "dynamo_frontend_ttft_stage_seconds", StageLabel: "stage", PhaseLabel: "phase", Exclusive: true},
		{Server: ServerVLLM, TTFTFamily: "vllm:time_to_first_token_seconds",
			Stages:    []StageFamily{{"queue", "vllm:request_queue_time_seconds"}, {"prefill", "vllm:request_prefill_time_seconds"}},
			Uncovered: "vLLM's queue and prefill times start when the engine core queues the request: tokenisation and input processing before it are outside both"},
		{Server: ServerSGLang, TTFTFamily: "sglang:time_to_first_token_seconds",
			Stages:    []StageFamily{{"queue", "sglang:queue_time_seconds"}},
			Uncovered: "SGLang exposes only the queue time: prefill and everything outside the scheduler are not broken down"},
	}
}

// dynamoStageOrder is the order Dynamo's exclusive attribution walks a
// request: stages are listed in it; unknown stages follow alphabetically.
var dynamoStageOrder = []string{
	"python_preprocess", "preprocess_queue", "template_render", "tokenize", "template_tokenize",
	"structural_tag_build", "preprocess", "multimodal_prepare", "mm_routing_build",
	"route", "dispatch_prepare", "backend", "first_token", "response_postprocess", "frontend_overhead",
}

var phaseOrder = []string{"", "none", "aggregated", "prefill", "decode"}

// unitSuffixes maps family-name suffixes to AIPerf's inferred units,
// longest first.
var unitSuffixes = []struct{ suffix, unit string }{
	{"_seconds_total", "seconds"}, {"_tokens_total", "tokens"}, {"_requests_total", "requests"},
	{"_bytes_total", "bytes"}, {"_blocks_total", "blocks"}, {"_errors_total", "errors"},
	{"_ms_total", "milliseconds"}, {"_ns_total", "nanoseconds"}, {"_error_count_total", "errors"},
	{"_milliseconds", "milliseconds"}, {"_nanoseconds", "nanoseconds"}, {"_seconds", "seconds"},
	{"_error_count", "errors"}, {"_block_count", "blocks"}, {"_kilobytes", "kilobytes"},
	{"_megabytes", "megabytes"}, {"_gigabytes", "gigabytes"}, {"_celsius", "celsius"},
	{"_joules", "joule"}, {"_watts", "watt"}, {"_percent", "percent"}, {"_requests", "requests"},
	{"_tokens", "tokens"}, {"_blocks", "blocks"}, {"_errors", "errors"}, {"_bytes", "bytes"},
	{"_ratio", "ratio"}, {"_total", "count"}, {"_count", "count"}, {"_perc", "percent"},
	{"_reqs", "requests"}, {"_gb_s", "gb/s"}, {"_ms", "milliseconds"}, {"_ns", "nanoseconds"},
}

// familyUnit is the unit of a family as exported: counters are keyed
// without their _total suffix, which the suffix table still expects.
func familyUnit(name string, kind MetricKind) string {
	if kind == KindCounter {
		if u := InferUnit(name + "_total"); u != "" {
			return u
		}
	}
	return InferUnit(name)
}

// InferUnit infers a family's unit from its name suffix, as AIPerf does;
// "" when none applies.
func InferUnit(family string) string {
	if strings.HasSuffix(family, "request_success") || strings.HasSuffix(family, "request_success_total") {
		return "requests"
	}
	best := ""
	unit := ""
	for _, s := range unitSuffixes {
		if strings.HasSuffix(family, s.suffix) && len(s.suffix) > len(best) {
			best, unit = s.suffix, s.unit
		}
	}
	return unit
}

// WriteVocabularyMarkdown writes the vocabulary as a Markdown table (the
// README's copy, kept equal by a test).
func WriteVocabularyMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("| common name | type | unit | meaning | Dynamo | vLLM | SGLang | llama.cpp |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, m := range ServerMetricVocabulary() {
		cells := []string{m.Name, string(m.Kind), m.Unit, m.Meaning}
		for _, server := range []string{ServerDynamo, ServerVLLM, ServerSGLang, ServerLlamaCpp} {
			var fams []string
			for _, f := range m.Families {
				if f.Server == server {
					fams = append(fams, "`"+f.Family+"`")
				}
			}
			cells = append(cells, strings.Join(fams, "<br>"))
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
