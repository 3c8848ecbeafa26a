package peerruns

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// SGLang's `python -m sglang.bench_serving --output-file F.jsonl` appends
// one JSON object per run to F (with --output-details, the per-request
// lists of vLLM's benchmark_serving.py, which it was adapted from). Its
// definitions, from bench_serving.py:
//   - e2e_latency is the time from the request's send to the stream's last
//     line (the [DONE] or usage line after the last content chunk); AIPerf's
//     request_latency ends at the last content chunk;
//   - ttft is the first content chunk's time, AIPerf's;
//   - tpot is (e2e_latency − ttft)/(output_len − 1), AIPerf's
//     inter_token_latency but for the latency's end;
//   - itl pools one gap per content chunk for the OpenAI-compatible
//     backends (AIPerf's inter_chunk_latency), but for the native backend
//     (sglang, sglang-native) spreads each chunk's gap evenly over the tokens
//     it brought (gap/k, k times; so in the versions read, 2025 on), which
//     is no metric of AIPerf's.
//
// Python's json.dumps writes float('inf') as the bare token Infinity, which
// is not JSON: SGLang writes it for request_rate (its default, inf).

// sglangBareOK are the members SGLang writes as Python floats that may be
// infinite or NaN: its settings, not its statistics.
var sglangBareOK = map[string]bool{"request_rate": true}

// sglangChunkBackends are bench_serving's backends whose itl is one gap
// per content chunk.
var sglangChunkBackends = map[string]bool{"sglang-oai": true, "sglang-oai-chat": true, "vllm": true, "vllm-chat": true,
	"lmdeploy": true, "lmdeploy-chat": true, "trt": true, "truss": true}

// sglangLine is one run of an SGLang result file.
type sglangLine struct {
	no int // 1-based line number
	b  []byte
}

func openSGLangBench(path string, index int) (*Run, error) {
	lines, err := sglangLines(path)
	if err != nil {
		return nil, err
	}
	if index == -1 { // the file named, not one of its runs
		if len(lines) != 1 {
			return nil, fmt.Errorf("%s: an sglang bench_serving file of %d runs: name one as %s (0-based)",
				path, len(lines), filepath.Join(path, "run_N"))
		}
		index = 0
	}
	if index < 0 || index >= len(lines) {
		return nil, fmt.Errorf("%s: no run %d (the file has %d)", path, index, len(lines))
	}
	base := filepath.Base(path)
	run := &Run{Name: strings.TrimSuffix(base, filepath.Ext(base)) + "/run_" + strconv.Itoa(index), Format: FormatSGLangBench,
		NoWorkload: "SGLang's bench_serving result does not record its prompts"}
	return run, run.sglangRun(path, lines[index])
}

// sglangLines reads the file's runs: its non-blank lines.
func sglangLines(path string) ([]sglangLine, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []sglangLine
	for i, l := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			out = append(out, sglangLine{no: i + 1, b: l})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: empty file", path)
	}
	return out, nil
}

// sglangRun reads one line as the run's profile.
func (r *Run) sglangRun(path string, line sglangLine) error {
	where := path + ":" + strconv.Itoa(line.no)
	b, err := replaceBareNumbers(line.b, func(key string, depth int) bool { return depth == 1 && sglangBareOK[key] })
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	var top map[string]json.RawMessage
	if err := decodeLine(where, b, &top); err != nil {
		return err
	}
	nums, bad := numbers(top, isSGLangStatKey)
	if bad != "" {
		return fmt.Errorf("%s: field %q: %s is not a number", where, bad, strings.TrimSpace(string(top[bad])))
	}
	shape := r.sglangShape(top)
	lists, err := readLists(where, top, func(v any) error { return decodeLine(where, b, v) })
	if err != nil {
		return err
	}
	p := newProfile()
	if lists != nil {
		r.listProfile(p, lists, nums, shape)
		r.listWorkload("SGLang bench_serving's", path, lists, readBenchLoad(top))
	} else if err := r.sglangAggregates(p, where, nums, shape); err != nil {
		return err
	}
	r.Profile = p.sorted()
	r.Profile.InputConfig, err = sglangInputConfig(top, r.Workload)
	return err
}

// sglangShape names SGLang's figures and says, from the backend, what its
// itl is.
func (r *Run) sglangShape(top map[string]json.RawMessage) benchShape {
	var backend string
	_ = json.Unmarshal(top["backend"], &backend)
	shape := benchShape{tool: "SGLang bench_serving's", latency: "e2e_latency", totalThroughput: "total_throughput",
		chunkITL: sglangChunkBackends[backend]}
	r.warn("SGLang's e2e_latency ends at the stream's last line ([DONE] or usage), AIPerf's request_latency at the last content chunk; its tpot is (e2e_latency − ttft)/(output_len − 1), inter_token_latency with that end")
	switch {
	case backend == "sglang" || backend == "sglang-native":
		r.warn("backend %q: bench_serving's itl for its native backend is not one gap per chunk (its versions since 2025 at least spread each chunk's gap evenly over the tokens it brought), neither AIPerf's inter_chunk_latency nor a gap per token: itl is not read (nor time_to_second_token from the lists)", backend)
	case !shape.chunkITL:
		r.warn("backend %q is not one whose itl bench_serving records per chunk: itl is not read (nor time_to_second_token from the lists)", backend)
	}
	return shape
}

// sglangAggregates reads the run's statistics (no per-request lists).
func (r *Run) sglangAggregates(p *profile, where string, nums map[string]float64, shape benchShape) error {
	completed, ok := nums["completed"]
	if !ok {
		return missing(where, "completed")
	}
	if completed <= 0 {
		r.warn("no request completed: the per-request statistics it writes as 0 are not read")
		p.scalar(results.TagRequestCount, 0)
		return nil
	}
	p.scalar(results.TagRequestCount, completed)
	requestStats(p, nums, shape)
	r.itlNote(shape)
	p.present(nums, results.TagBenchmarkDuration, "duration")
	p.present(nums, results.TagTotalISL, "total_input_tokens")
	p.present(nums, results.TagTotalOSL, "total_output_tokens")
	p.present(nums, results.TagTotalOutputTokens, "total_output_tokens")
	r.sglangThroughputs(p, nums, completed)
	return nil
}

// sglangThroughputs adds the throughputs, deriving those the file lacks
// (SGLang's 2024 results kept only output_throughput) from the totals and
// the duration, as SGLang and AIPerf compute them.
func (r *Run) sglangThroughputs(p *profile, nums map[string]float64, completed float64) {
	dur, okDur := nums["duration"]
	in, okIn := nums["total_input_tokens"]
	out, okOut := nums["total_output_tokens"]
	okDur = okDur && dur > 0
	for _, t := range []struct {
		tag, key, formula string
		v                 float64
		ok                bool
	}{
		{results.TagRequestThroughput, "request_throughput", "completed / duration", completed / dur, okDur},
		{results.TagOutputThroughput, "output_throughput", "total_output_tokens / duration", out / dur, okDur && okOut},
		{results.TagTotalThroughput, "total_throughput", "(total_input_tokens + total_output_tokens) / duration", (in + out) / dur, okDur && okIn && okOut},
	} {
		if p.present(nums, t.tag, t.key) || !t.ok {
			continue
		}
		p.scalar(t.tag, t.v)
		r.warn("the file has no %s: %s is derived as %s", t.key, t.tag, t.formula)
	}
}

// isSGLangStatKey reports whether k names one of SGLang's statistics read.
func isSGLangStatKey(k string) bool {
	for _, m := range []string{"e2e_latency", "ttft", "tpot", "itl"} {
		if strings.HasSuffix(k, "_"+m+"_ms") {
			return true
		}
	}
	switch k {
	case "completed", "duration", "total_input_tokens", "total_output_tokens",
		"request_throughput", "input_throughput", "output_throughput", "total_throughput":
		return true
	}
	return false
}

// sglangInputConfig records the model (server_info's model_path, when the
// result has it), the request rate and the concurrency cap.
func sglangInputConfig(top map[string]json.RawMessage, wl *traces.Workload) (json.RawMessage, error) {
	var head struct {
		ServerInfo struct {
			ModelPath string `json:"model_path"`
		} `json:"server_info"`
		RequestRate    json.RawMessage `json:"request_rate"`
		MaxConcurrency *int            `json:"max_concurrency"`
	}
	b, _ := json.Marshal(top)
	_ = json.Unmarshal(b, &head)
	ic := results.InputConfig{
		Endpoint: &results.EndpointConfig{ModelNames: []string{}, Streaming: true},
		Loadgen:  &results.LoadgenConfig{},
	}
	if m := head.ServerInfo.ModelPath; m != "" {
		ic.Endpoint.ModelNames = []string{m}
	}
	if v, err := strconv.ParseFloat(string(head.RequestRate), 64); err == nil && finite(v) {
		ic.Loadgen.RequestRate = v
	}
	if head.MaxConcurrency != nil {
		ic.Loadgen.Concurrency = *head.MaxConcurrency
	}
	ic.Workload = workloadInfo(wl)
	return encodeInputConfig(ic, FormatSGLangBench)
}

// decodeLine decodes one line of a JSON Lines file; errors name where
// (file:line) and the field.
func decodeLine(where string, b []byte, v any) error {
	err := json.Unmarshal(b, v)
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		return fmt.Errorf("%s: field %q: %s is not a %s", where, te.Field, te.Value, te.Type)
	case errors.As(err, &se):
		return fmt.Errorf("%s: malformed JSON at column %d: %w", where, se.Offset, err)
	case err != nil:
		return fmt.Errorf("%s: %w", where, err)
	}
	return nil
}

// bareNumbers are the non-JSON numbers Python's json.dumps writes.
var bareNumbers = []string{"-Infinity", "Infinity", "NaN"}

// replaceBareNumbers replaces each bare Infinity, -Infinity or NaN outside
// strings by the JSON string of it, where ok accepts the member holding it
// (its name and the depth of the object or list it is in, 1 for the
// top-level object); elsewhere it is an error naming the member.
func replaceBareNumbers(b []byte, ok func(key string, depth int) bool) ([]byte, error) {
	var (
		out          []byte
		depth, from  int
		inStr, esc   bool
		strAt        int
		lastStr, key string
	)
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
				_ = json.Unmarshal(b[strAt:i+1], &lastStr)
			}
			continue
		}
		switch c {
		case '"':
			inStr, strAt = true, i
		case ':':
			key = lastStr
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case '-', 'I', 'N':
			tok := bareAt(b[i:])
			if tok == "" {
				continue
			}
			if !ok(key, depth) {
				return nil, fmt.Errorf("field %q: %s is not a number (SGLang writes it only for %s)", key, tok, strings.Join(sortedKeys(sglangBareOK), ", "))
			}
			out = append(append(append(out, b[from:i]...), '"'), tok...)
			out = append(out, '"')
			i += len(tok) - 1
			from = i + 1
		}
	}
	if out == nil {
		return b, nil
	}
	return append(out, b[from:]...), nil
}

// bareAt is the bare number b starts with, or "".
func bareAt(b []byte) string {
	for _, t := range bareNumbers {
		if bytes.HasPrefix(b, []byte(t)) {
			return t
		}
	}
	return ""
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// sniffSGLang reports whether the first line of b is an SGLang
// bench_serving result: its backend and its e2e_latency median, which
// vLLM names e2el.
func sniffSGLang(b []byte) bool {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	line, err := replaceBareNumbers(line, func(string, int) bool { return true })
	if err != nil {
		return false
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(line, &top) != nil {
		return false
	}
	for _, k := range []string{"backend", "median_e2e_latency_ms"} {
		if _, ok := top[k]; !ok {
			return false
		}
	}
	return true
}
