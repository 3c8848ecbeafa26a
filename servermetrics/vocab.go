package servermetrics

import (
	"io"
	"strings"
)

// Servers whose metric families simbench knows.
const (
	Dynamo   = "dynamo"
	VLLM     = "vllm"
	SGLang   = "sglang"
	LlamaCpp = "llama.cpp"
)

// MetricInfo is one entry of the common server-metrics vocabulary:
// a quantity and the families that expose it on each server.
type MetricInfo struct {
	Name     string // the common name
	Kind     Kind
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

// Vocabulary is the table of known server metric families,
// mapped to one vocabulary so runs against different servers (and the
// simulator, which exposes the same families) line up. Names come from the
// servers' metric documentation: Dynamo's frontend metrics catalogue
// (lib/runtime/src/metrics/prometheus_names.rs), vLLM's V1 metrics
// (vllm/v1/metrics/loggers.py), SGLang's (python/sglang/srt/metrics/
// collector.py) and llama.cpp's server (/metrics with --metrics).
// docs/server-metrics.md prints the same table.
func Vocabulary() []MetricInfo {
	h, g, c := KindHistogram, KindGauge, KindCounter
	return []MetricInfo{
		{"ttft", h, "seconds", "time to first token as the server measures it", []FamilySource{
			{Dynamo, "dynamo_frontend_time_to_first_token_seconds"},
			{VLLM, "vllm:time_to_first_token_seconds"},
			{SGLang, "sglang:time_to_first_token_seconds"}}, "sum"},
		{"ttft_stage", h, "seconds", "exclusive TTFT stage durations (labels stage, phase): the stages partition TTFT", []FamilySource{
			{Dynamo, "dynamo_frontend_ttft_stage_seconds"}}, ""},
		{"itl", h, "seconds", "inter-token latency", []FamilySource{
			{Dynamo, "dynamo_frontend_inter_token_latency_seconds"},
			{VLLM, "vllm:inter_token_latency_seconds"},
			{VLLM, "vllm:time_per_output_token_seconds"},
			{SGLang, "sglang:inter_token_latency_seconds"}}, "sum"},
		{"request_latency", h, "seconds", "end-to-end request latency", []FamilySource{
			{Dynamo, "dynamo_frontend_request_duration_seconds"},
			{VLLM, "vllm:e2e_request_latency_seconds"},
			{SGLang, "sglang:e2e_request_latency_seconds"}}, "sum"},
		{"queue_time", h, "seconds", "time a request waits in the engine queue before it is first scheduled", []FamilySource{
			{VLLM, "vllm:request_queue_time_seconds"},
			{SGLang, "sglang:queue_time_seconds"}}, "sum"},
		{"prefill_time", h, "seconds", "first scheduled → first token (prefill, including time behind other work)", []FamilySource{
			{VLLM, "vllm:request_prefill_time_seconds"}}, "sum"},
		{"decode_time", h, "seconds", "first token → last token", []FamilySource{
			{VLLM, "vllm:request_decode_time_seconds"}}, "sum"},
		{"input_tokens", h, "tokens", "prompt length per request", []FamilySource{
			{Dynamo, "dynamo_frontend_input_sequence_tokens"},
			{VLLM, "vllm:request_prompt_tokens"}}, "sum"},
		{"output_tokens", h, "tokens", "output length per request", []FamilySource{
			{Dynamo, "dynamo_frontend_output_sequence_tokens"},
			{VLLM, "vllm:request_generation_tokens"}}, "sum"},
		{"requests_running", g, "requests", "requests in the running batch", []FamilySource{
			{VLLM, "vllm:num_requests_running"},
			{SGLang, "sglang:num_running_reqs"},
			{LlamaCpp, "llamacpp:requests_processing"}}, "sum"},
		{"requests_waiting", g, "requests", "requests queued, not yet scheduled", []FamilySource{
			{Dynamo, "dynamo_frontend_queued_requests"},
			{VLLM, "vllm:num_requests_waiting"},
			{SGLang, "sglang:num_queue_reqs"},
			{LlamaCpp, "llamacpp:requests_deferred"}}, "sum"},
		{"requests_inflight", g, "requests", "requests between arrival and completion at the frontend", []FamilySource{
			{Dynamo, "dynamo_frontend_inflight_requests"}}, "sum"},
		{"kv_cache_usage", g, "ratio", "share of KV-cache blocks (tokens) in use, 0–1", []FamilySource{
			{VLLM, "vllm:kv_cache_usage_perc"},
			{VLLM, "vllm:gpu_cache_usage_perc"},
			{SGLang, "sglang:token_usage"},
			{LlamaCpp, "llamacpp:kv_cache_usage_ratio"}}, "mean"},
		{"prefix_cache_queries", c, "tokens", "prompt tokens looked up in the prefix cache", []FamilySource{
			{VLLM, "vllm:prefix_cache_queries"},
			{VLLM, "vllm:gpu_prefix_cache_queries"}}, "sum"},
		{"prefix_cache_hits", c, "tokens", "prompt tokens found in the prefix cache", []FamilySource{
			{VLLM, "vllm:prefix_cache_hits"},
			{VLLM, "vllm:gpu_prefix_cache_hits"},
			{SGLang, "sglang:cached_tokens"}}, "sum"},
		{"prompt_tokens", c, "tokens", "prompt tokens processed", []FamilySource{
			{VLLM, "vllm:prompt_tokens"},
			{SGLang, "sglang:prompt_tokens"},
			{LlamaCpp, "llamacpp:prompt_tokens"}}, "sum"},
		{"generation_tokens", c, "tokens", "output tokens generated", []FamilySource{
			{VLLM, "vllm:generation_tokens"},
			{SGLang, "sglang:generation_tokens"},
			{LlamaCpp, "llamacpp:tokens_predicted"}}, "sum"},
		{"requests_finished", c, "requests", "requests finished, by status or finish reason", []FamilySource{
			{Dynamo, "dynamo_frontend_requests"},
			{VLLM, "vllm:request_success"}}, "sum"},
		{"preemptions", c, "count", "requests preempted (swapped out or recomputed)", []FamilySource{
			{VLLM, "vllm:num_preemptions"}}, "sum"},
		{SpecDrafts, c, "count", "speculative decoding: drafts (a sequence's drafting in one step)", []FamilySource{
			{VLLM, "vllm:spec_decode_num_drafts"}}, "sum"},
		{SpecDraftTokens, c, "tokens", "speculative decoding: draft tokens proposed", []FamilySource{
			{VLLM, "vllm:spec_decode_num_draft_tokens"}}, "sum"},
		{SpecAcceptedTokens, c, "tokens", "speculative decoding: draft tokens accepted", []FamilySource{
			{VLLM, "vllm:spec_decode_num_accepted_tokens"}}, "sum"},
		{"spec_accepted_per_pos", c, "tokens", "speculative decoding: draft tokens accepted at each position (label position)", []FamilySource{
			{VLLM, "vllm:spec_decode_num_accepted_tokens_per_pos"}}, ""},
	}
}

// The speculative decoding counters' common names, and the ratios
// CommonMetrics derives from them.
const (
	SpecDrafts         = "spec_drafts"
	SpecDraftTokens    = "spec_draft_tokens"
	SpecAcceptedTokens = "spec_accepted_tokens"
	// SpecAcceptanceRate is accepted / draft tokens over the window.
	SpecAcceptanceRate = "spec_acceptance_rate"
	// SpecMeanAcceptedLength is 1 + accepted tokens / drafts: the tokens
	// a drafting sequence emits a step (vLLM's mean acceptance length).
	SpecMeanAcceptedLength = "spec_mean_accepted_length"
)

// LookupFamily finds the common metric a family belongs to; a
// counter may be named with or without its _total suffix.
func LookupFamily(family string) (info MetricInfo, server string, ok bool) {
	for _, m := range Vocabulary() {
		for _, f := range m.Families {
			if f.Family == family || m.Kind == KindCounter && f.Family+"_total" == family {
				return m, f.Server, true
			}
		}
	}
	return MetricInfo{}, "", false
}

// breakdownSource is a way to break a server's TTFT into stages: the TTFT
// histogram, and either one family labelled by stage (and phase) or one
// family per stage. Exclusive sources partition TTFT by construction;
// the others cover only part of it.
type breakdownSource struct {
	Server     string
	TTFTFamily string
	// StageFamily is labelled by StageLabel and PhaseLabel.
	StageFamily, StageLabel, PhaseLabel string
	// Stages are unlabelled families, one per stage, in TTFT order.
	Stages    []stageFamily
	Exclusive bool
	// Uncovered says what part of TTFT a non-exclusive source leaves out.
	Uncovered string
}

// stageFamily names one stage's histogram.
type stageFamily struct {
	Stage, Family string
}

// breakdownSources lists the known TTFT breakdowns, best first.
func breakdownSources() []breakdownSource {
	return []breakdownSource{
		{Server: Dynamo, TTFTFamily: "dynamo_frontend_time_to_first_token_seconds",
			StageFamily: "dynamo_frontend_ttft_stage_seconds", StageLabel: "stage", PhaseLabel: "phase", Exclusive: true},
		{Server: VLLM, TTFTFamily: "vllm:time_to_first_token_seconds",
			Stages:    []stageFamily{{"queue", "vllm:request_queue_time_seconds"}, {"prefill", "vllm:request_prefill_time_seconds"}},
			Uncovered: "vLLM's queue and prefill times start when the engine core queues the request: tokenisation and input processing before it are outside both"},
		{Server: SGLang, TTFTFamily: "sglang:time_to_first_token_seconds",
			Stages:    []stageFamily{{"queue", "sglang:queue_time_seconds"}},
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
func familyUnit(name string, kind Kind) string {
	if kind == KindCounter {
		if u := inferUnit(name + "_total"); u != "" {
			return u
		}
	}
	return inferUnit(name)
}

// inferUnit infers a family's unit from its name suffix, as AIPerf does;
// "" when none applies.
func inferUnit(family string) string {
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

// writeVocabularyMarkdown writes the vocabulary as a Markdown table (the
// copy in docs/server-metrics.md, kept equal by a test).
func writeVocabularyMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("| common name | type | unit | meaning | Dynamo | vLLM | SGLang | llama.cpp |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, m := range Vocabulary() {
		cells := []string{m.Name, string(m.Kind), m.Unit, m.Meaning}
		for _, server := range []string{Dynamo, VLLM, SGLang, LlamaCpp} {
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
