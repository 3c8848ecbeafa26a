package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/simbench/simbench/results"
)

// DynoSim's replay report (ai-dynamo/dynamo lib/mocker/src/replay/collector.rs,
// components/src/dynamo/replay) is a flat JSON object of summary keys, or,
// since the ReplayReport API, {"summary": {...}, "per_request": [...], ...}.
// Distributions are written as {mean,min,max,median,p75,p90,p95,p99,std}_<m>_ms
// (rates without _ms); there is no p1–p25 and median is p50.

// dynoDist maps one DynoSim distribution onto an AIPerf tag.
type dynoDist struct {
	name, suffix, tag, unit string
}

// dynoStats maps DynoSim's statistic prefixes onto AIPerf's names.
var dynoStats = []struct{ dyno, aiperf string }{
	{"mean", "avg"}, {"min", "min"}, {"max", "max"}, {"median", "p50"}, {"p75", "p75"},
	{"p90", "p90"}, {"p95", "p95"}, {"p99", "p99"}, {"std", "std"},
}

// dynoScalars maps DynoSim's run-level keys onto AIPerf's scalar metrics.
var dynoScalars = []struct{ key, tag, unit string }{
	{"request_throughput_rps", results.TagRequestThroughput, "requests/sec"},
	{"completed_requests", results.TagRequestCount, "requests"},
	{"output_throughput_tok_s", results.TagOutputThroughput, "tokens/sec"},
	{"total_output_tokens", results.TagTotalOutputTokens, "tokens"},
	{"duration_ms", results.TagBenchmarkDuration, "ms"},
	{"total_input_tokens", results.TagTotalISL, "tokens"},
	{"total_output_tokens", results.TagTotalOSL, "tokens"},
	{"total_throughput_tok_s", results.TagTotalThroughput, "tokens/sec"},
	{"goodput_request_throughput_rps", results.TagGoodput, "requests/sec"},
	{"goodput_completed_requests", results.TagGoodRequestCount, "requests"},
}

// DynoSimReport is a DynoSim replay report read as an AIPerf profile.
type DynoSimReport struct {
	Profile *results.Profile
	// PerRequest holds the report's inline per-request records, if any.
	PerRequest []json.RawMessage
	Warnings   []Warning
}

// isDynoSimReport reports whether a decoded top-level object looks like a
// DynoSim report rather than profile_export_aiperf.json.
func isDynoSimReport(top map[string]json.RawMessage) bool {
	if s, ok := top["summary"]; ok && bytes.HasPrefix(bytes.TrimSpace(s), []byte("{")) {
		return true
	}
	_, a := top["mean_ttft_ms"]
	_, b := top["completed_requests"]
	return a || b
}

// ReadDynoSimReport reads a DynoSim replay report. name is used in errors.
//
// ITL: tpot_* is DynoSim's per-request (last − first)/(osl − 1), which is
// AIPerf's inter_token_latency in every report version, so it is preferred.
// Before dynamo PR #12883, itl_* pooled every consecutive-token gap (today's
// token_gap_*) and output_token_throughput_per_user_* pooled 1000/gap; such a
// report has no token_gap_* keys, its itl_* is read as token_gap and its
// per-user throughput is dropped, each with a warning.
func ReadDynoSimReport(r io.Reader, name string) (*DynoSimReport, error) {
	var top map[string]json.RawMessage
	if err := json.NewDecoder(r).Decode(&top); err != nil {
		return nil, fmt.Errorf("%s: not a JSON object: %w", name, err)
	}
	if !isDynoSimReport(top) {
		return nil, fmt.Errorf("%s: not a DynoSim replay report (no summary, mean_ttft_ms or completed_requests)", name)
	}
	rep := &DynoSimReport{Profile: &results.Profile{SchemaVersion: "dynosim"}}
	summary := top
	if raw, ok := top["summary"]; ok {
		if err := json.Unmarshal(raw, &summary); err != nil {
			return nil, fmt.Errorf("%s: field \"summary\": %w", name, err)
		}
		if err := decodePerRequest(top["per_request"], &rep.PerRequest); err != nil {
			return nil, fmt.Errorf("%s: field \"per_request\": %w", name, err)
		}
	}
	nums, err := numericKeys(summary)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	rep.addDistributions(nums)
	rep.addScalars(nums)
	rep.Warnings = append(rep.Warnings, warnf("%s: DynoSim percentiles are nearest-rank DDSketch estimates (0.1 %% relative accuracy); AIPerf interpolates linearly", name))
	return rep, nil
}

func decodePerRequest(raw json.RawMessage, out *[]json.RawMessage) error {
	if len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	return json.Unmarshal(raw, out)
}

// numericKeys keeps the finite numeric values of an object; other values
// (nested accounting objects, strings, nulls) are not statistics.
func numericKeys(obj map[string]json.RawMessage) (map[string]float64, error) {
	out := make(map[string]float64, len(obj))
	for k, raw := range obj {
		s := string(bytes.TrimSpace(raw))
		if s == "" || s == "null" || s[0] == '{' || s[0] == '[' || s[0] == '"' || s == "true" || s == "false" {
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("field %q: %s is not a number", k, s)
		}
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out[k] = v
		}
	}
	return out, nil
}

func (rep *DynoSimReport) addDistributions(nums map[string]float64) {
	_, hasGap := nums["mean_token_gap_ms"]
	_, hasTPOT := nums["mean_tpot_ms"]
	dists := []dynoDist{
		{"ttft", "_ms", results.TagTTFT, "ms"},
		{"ttst", "_ms", results.TagTTST, "ms"},
		{"e2e_latency", "_ms", results.TagRequestLatency, "ms"},
	}
	switch {
	case hasTPOT:
		dists = append(dists, dynoDist{"tpot", "_ms", results.TagITL, "ms"})
	case hasGap:
		dists = append(dists, dynoDist{"itl", "_ms", results.TagITL, "ms"})
	}
	if hasGap {
		dists = append(dists, dynoDist{"token_gap", "_ms", results.TagTokenGap, "ms"},
			dynoDist{"output_token_throughput_per_user", "", results.TagOTPU, "tokens/sec/user"})
	} else if _, ok := nums["mean_itl_ms"]; ok {
		dists = append(dists, dynoDist{"itl", "_ms", results.TagTokenGap, "ms"})
		rep.Warnings = append(rep.Warnings, warnf("DynoSim report predates token_gap_* (dynamo PR #12883): its pooled itl_* is compared as token_gap, and its pooled output_token_throughput_per_user is not compared"))
	}
	for _, d := range dists {
		stats := map[string]float64{}
		for _, s := range dynoStats {
			if v, ok := nums[s.dyno+"_"+d.name+d.suffix]; ok {
				stats[s.aiperf] = v
			}
		}
		if len(stats) > 0 {
			rep.Profile.Metrics = append(rep.Profile.Metrics, results.MetricResult{Tag: d.tag, Unit: d.unit, Stats: stats})
		}
	}
}

func (rep *DynoSimReport) addScalars(nums map[string]float64) {
	for _, s := range dynoScalars {
		if v, ok := nums[s.key]; ok {
			rep.Profile.Metrics = append(rep.Profile.Metrics,
				results.MetricResult{Tag: s.tag, Unit: s.unit, Stats: map[string]float64{"avg": v}})
		}
	}
}

// dynoRequest is one line of DynoSim's --per-request-jsonl (PerRequestRecord).
// Only the fields simbench uses are decoded; times are virtual ms from the
// first arrival.
type dynoRequest struct {
	SessionID             *string  `json:"session_id"`
	TurnIndex             *int     `json:"turn_index"`
	UUID                  string   `json:"uuid"`
	ArrivalMs             *float64 `json:"arrival_time_ms"`
	TerminalMs            *float64 `json:"terminal_time_ms"`
	FirstTokenMs          *float64 `json:"first_token_ms"`
	LastTokenMs           *float64 `json:"last_token_ms"`
	TTSTMs                *float64 `json:"ttst_ms"`
	InputLength           int      `json:"input_length"`
	RequestedOutputLength int      `json:"requested_output_length"`
	OutputLength          int      `json:"output_length"`
	WorkerID              *int     `json:"worker_id"`
	DecodeWorkerIdx       *int     `json:"decode_worker_idx"`
	TerminalStatus        string   `json:"terminal_status"`
}

// dynoRecord turns one DynoSim per-request line into the request's AIPerf
// metrics. It rebuilds the record's timings — first token, second token (at
// first + ttst) and the rest at last_token_ms — and lets
// results.ComputeMetrics apply AIPerf's definitions, so TTFT, TTST, request
// latency, ITL and per-user throughput mean exactly what they mean for a
// real run. DynoSim does not export individual token times, so the chunk-gap
// lists this reconstruction would imply are dropped: such records carry no
// inter_chunk_latency and no token_gap.
func dynoRecord(line []byte, index int) (results.RecordMetrics, error) {
	var d dynoRequest
	if err := json.Unmarshal(line, &d); err != nil {
		return results.RecordMetrics{}, fmt.Errorf("malformed JSON: %w", err)
	}
	if d.ArrivalMs == nil {
		return results.RecordMetrics{}, errors.New(`field "arrival_time_ms": missing`)
	}
	rec := &results.Record{ID: d.UUID, SessionNum: index, TraceRow: -1, Turn: deref(d.TurnIndex),
		StartNs: msToNs(*d.ArrivalMs), InputTokens: d.InputLength, OutputTokens: d.OutputLength,
		RequestedOutputTokens: d.RequestedOutputLength}
	if d.SessionID != nil {
		rec.CorrelationID = *d.SessionID
	}
	if w := d.DecodeWorkerIdx; w != nil {
		rec.Worker = "worker-" + strconv.Itoa(*w)
	} else if w := d.WorkerID; w != nil {
		rec.Worker = "worker-" + strconv.Itoa(*w)
	}
	if d.TerminalMs != nil {
		rec.EndNs = msToNs(*d.TerminalMs)
	}
	if d.TerminalStatus != "" && d.TerminalStatus != "completed" {
		rec.Error = &results.ErrorDetails{Type: "DynoSim" + d.TerminalStatus, Message: "request " + d.TerminalStatus + " in DynoSim"}
	} else {
		rec.Chunks = dynoChunks(d)
	}
	m := results.ComputeMetrics(rec)
	m.ICL, m.TokenGap, m.Ext.ChunkNs = nil, nil, nil // placed chunks, not measured ones
	return m, nil
}

// dynoChunks places the first token, the second token and the remaining
// tokens at the times DynoSim reports.
func dynoChunks(d dynoRequest) []results.Chunk {
	if d.FirstTokenMs == nil || d.OutputLength < 1 {
		return nil
	}
	first := msToNs(*d.FirstTokenMs)
	chunks := []results.Chunk{{AtNs: first, Tokens: 1}}
	rest := d.OutputLength - 1
	if rest > 0 && d.TTSTMs != nil {
		chunks = append(chunks, results.Chunk{AtNs: first + msToNs(*d.TTSTMs), Tokens: 1})
		rest--
	}
	if rest > 0 {
		last := first
		if d.LastTokenMs != nil {
			last = msToNs(*d.LastTokenMs)
		}
		chunks = append(chunks, results.Chunk{AtNs: last, Tokens: rest})
	}
	return chunks
}

func msToNs(ms float64) int64 { return int64(math.Round(ms * 1e6)) }

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
