package peerruns

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/simbench/simbench/results"
)

// vllmMetrics maps vllm bench serve's per-request metrics onto AIPerf's.
// Its tpot is (latency − ttft)/(output_len − 1) per request, AIPerf's
// inter_token_latency; its itl pools the gaps between streamed chunks,
// AIPerf's inter_chunk_latency; e2el is the request latency.
var vllmMetrics = []struct{ name, tag string }{
	{"e2el", results.TagRequestLatency},
	{"ttft", results.TagTTFT},
	{"tpot", results.TagITL},
	{"itl", results.TagICL},
}

func openVLLMBench(path string) (*Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if err := decodeJSON(path, b, &top); err != nil {
		return nil, err
	}
	nums, err := vllmNumbers(path, b, top)
	if err != nil {
		return nil, err
	}
	completed, ok := nums["completed"]
	if !ok {
		return nil, missing(path, "completed")
	}
	run := &Run{Name: strings.TrimSuffix(filepath.Base(path), ".json"), Format: FormatVLLMBench,
		NoWorkload: "vllm bench serve's result does not record its dataset"}
	p := newProfile()
	if completed > 0 {
		vllmRequestMetrics(p, nums, completed)
	} else {
		run.warn("no request completed: the per-request statistics it writes as 0 are not read")
		p.scalar(results.TagRequestCount, 0)
	}
	p.scalar(results.TagTotalOutputTokens, nums["total_output_tokens"])
	p.scalar(results.TagBenchmarkDuration, nums["duration"])
	p.scalar(results.TagTotalISL, nums["total_input_tokens"])
	p.scalar(results.TagTotalOSL, nums["total_output_tokens"])
	if f := nums["failed"]; f > 0 {
		p.scalar(results.TagErrorRequestCount, f)
	}
	if completed > 0 {
		p.scalar(results.TagTotalThroughput, nums["total_token_throughput"])
	}
	run.Profile = p.p
	run.warn("vllm bench serve's itl pools the gaps between streamed chunks: it is compared as inter_chunk_latency; its tpot is inter_token_latency")
	run.Profile.InputConfig, err = vllmInputConfig(top)
	return run, err
}

// vllmRequestMetrics adds the metrics of the completed requests, in
// AIPerf's order.
func vllmRequestMetrics(p *profile, nums map[string]float64, completed float64) {
	p.scalar(results.TagRequestThroughput, nums["request_throughput"])
	p.dist(results.TagRequestLatency, vllmStats(nums, "e2el"), 1)
	p.scalar(results.TagRequestCount, completed)
	p.dist(results.TagTTFT, vllmStats(nums, "ttft"), 1)
	p.dist(results.TagITL, vllmStats(nums, "tpot"), 1)
	p.scalar(results.TagOutputThroughput, nums["output_throughput"])
	p.dist(results.TagOSL, map[string]float64{"avg": nums["total_output_tokens"] / completed}, 1)
	p.dist(results.TagISL, map[string]float64{"avg": nums["total_input_tokens"] / completed}, 1)
	p.dist(results.TagICL, vllmStats(nums, "itl"), 1)
}

// vllmNumbers keeps the result's numeric members. Others (request_rate
// "inf", nulls, strings) are not statistics, except where a statistic is
// read: there a non-number is an error naming the field and its line.
func vllmNumbers(path string, b []byte, top map[string]json.RawMessage) (map[string]float64, error) {
	out := map[string]float64{}
	for k, raw := range top {
		s := strings.TrimSpace(string(raw))
		v, err := strconv.ParseFloat(s, 64)
		switch {
		case err == nil && finite(v):
			out[k] = v
		case s != "null" && isStatKey(k):
			return nil, fmt.Errorf("%s:%d: field %q: %s is not a number", path, keyLine(b, k), k, s)
		}
	}
	return out, nil
}

// keyLine is the line of the first member named k.
func keyLine(b []byte, k string) int {
	key, _ := json.Marshal(k)
	return lineAt(b, int64(max(bytes.Index(b, key), 0)))
}

// isStatKey reports whether k names one of the statistics read.
func isStatKey(k string) bool {
	for _, m := range vllmMetrics {
		if strings.HasSuffix(k, "_"+m.name+"_ms") {
			return true
		}
	}
	switch k {
	case "completed", "failed", "duration", "total_input_tokens", "total_output_tokens",
		"request_throughput", "output_throughput", "total_token_throughput":
		return true
	}
	return false
}

// vllmStats gathers metric m's {mean,median,std,pN}_<m>_ms statistics.
func vllmStats(nums map[string]float64, m string) map[string]float64 {
	out := map[string]float64{}
	suffix := "_" + m + "_ms"
	for k, v := range nums {
		stat, ok := strings.CutSuffix(k, suffix)
		if !ok {
			continue
		}
		switch {
		case stat == "mean":
			out["avg"] = v
		case stat == "median":
			out["p50"] = v
		case stat == "std":
			out["std"] = v
		case strings.HasPrefix(stat, "p"):
			if name, ok := percentileStat(stat[1:]); ok {
				out[name] = v
			}
		}
	}
	return out
}

// vllmInputConfig records the model, the request rate and the
// concurrency cap.
func vllmInputConfig(top map[string]json.RawMessage) (json.RawMessage, error) {
	var head struct {
		ModelID        string          `json:"model_id"`
		NumPrompts     int             `json:"num_prompts"`
		RequestRate    json.RawMessage `json:"request_rate"`
		MaxConcurrency *int            `json:"max_concurrency"`
	}
	b, _ := json.Marshal(top)
	_ = json.Unmarshal(b, &head)
	ic := results.InputConfig{
		Endpoint: &results.EndpointConfig{ModelNames: []string{head.ModelID}, Streaming: true},
		Loadgen:  &results.LoadgenConfig{RequestCount: head.NumPrompts},
	}
	if v, err := strconv.ParseFloat(string(head.RequestRate), 64); err == nil && finite(v) {
		ic.Loadgen.RequestRate = v
	}
	if head.MaxConcurrency != nil {
		ic.Loadgen.Concurrency = *head.MaxConcurrency
	}
	return encodeInputConfig(ic, FormatVLLMBench)
}
