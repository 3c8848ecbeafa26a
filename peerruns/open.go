package peerruns

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// Formats of the runs this package reads.
const (
	FormatInferencePerf = "inference-perf"
	FormatVLLMBench     = "vllm-bench"
	FormatGuideLLM      = "guidellm"
	FormatSGLangBench   = "sglang-bench"
)

// Run is one run of another benchmark tool, in simbench's terms.
type Run struct {
	Name   string // label: the report or file, and the stage or benchmark
	Path   string // what the user gave
	Format string
	// Profile holds the AIPerf metrics whose definitions the tool shares
	// (and those derived from them, each named in Warnings).
	Profile *results.Profile
	// Workload is the workload the run replayed, rebuilt from the tool's
	// configuration; nil when the file does not describe it (NoWorkload
	// says why).
	Workload   *traces.Workload
	NoWorkload string
	// WorkloadNotes say how the workload was rebuilt where the tool's
	// configuration leaves a choice (prompt order, arrival draws, lengths).
	WorkloadNotes []error
	// Warnings say where the tool's definitions differ from AIPerf's, what
	// was left out and what was derived instead.
	Warnings []error
}

// spot is where one run lives: the file or report directory, and the
// stage or benchmark index within it (-1: the only one). An inference-perf
// report's stage files may carry a prefix (report.request_lifecycle's
// report_file_prefix); a directory holding the stage files of several
// prefixes names none of them (ambiguous lists them).
type spot struct {
	format    string
	path      string
	index     int
	prefix    string
	ambiguous []string
}

var (
	stageFile    = regexp.MustCompile(`^(.*)stage_([0-9]+)_lifecycle_metrics\.json$`)
	stageName    = regexp.MustCompile(`^stage_([0-9]+)$`)
	benchmarkRef = regexp.MustCompile(`^benchmark_([0-9]+)$`)
	runRef       = regexp.MustCompile(`^run_([0-9]+)$`)
)

// Detect names the format of the run at path ("" when it is none of the
// peers' formats): an inference-perf report directory (or the run
// directory above its results/), one of its stage files or DIR/stage_N; a
// vllm bench serve result; a guidellm benchmarks file or
// FILE/benchmark_N; an SGLang bench_serving result (.json or .jsonl) or
// FILE/run_N.
func Detect(path string) string {
	s, ok := locate(path)
	if !ok {
		return ""
	}
	return s.format
}

// Open reads the run at path (see Detect).
func Open(path string) (*Run, error) {
	s, ok := locate(path)
	if !ok {
		return nil, fmt.Errorf("%s: not an inference-perf report, a vllm bench serve or SGLang bench_serving result, or a guidellm benchmarks file", path)
	}
	var (
		run *Run
		err error
	)
	switch s.format {
	case FormatInferencePerf:
		run, err = openInferencePerf(s)
	case FormatVLLMBench:
		run, err = openVLLMBench(s.path)
	case FormatSGLangBench:
		run, err = openSGLangBench(s.path, s.index)
	default:
		run, err = openGuideLLM(s.path, s.index)
	}
	if err != nil {
		return nil, err
	}
	run.Path = path
	return run, nil
}

func locate(path string) (spot, bool) {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return locateVirtual(path)
	case st.IsDir():
		return findReport(path, -1)
	}
	if m := stageFile.FindStringSubmatch(filepath.Base(path)); m != nil {
		return spot{format: FormatInferencePerf, path: filepath.Dir(path), index: atoi(m[2]), prefix: m[1]}, true
	}
	f := sniffJSON(path)
	return spot{format: f, path: path, index: -1}, f != ""
}

// locateVirtual resolves DIR/stage_N, FILE/benchmark_N and FILE/run_N
// (an SGLang file's line), which name a part of a report rather than a
// file.
func locateVirtual(path string) (spot, bool) {
	parent, base := filepath.Dir(path), filepath.Base(path)
	if m := stageName.FindStringSubmatch(base); m != nil {
		return findReport(parent, atoi(m[1]))
	}
	if m := benchmarkRef.FindStringSubmatch(base); m != nil && sniffJSON(parent) == FormatGuideLLM {
		return spot{format: FormatGuideLLM, path: parent, index: atoi(m[1])}, true
	}
	if m := runRef.FindStringSubmatch(base); m != nil && sniffJSON(parent) == FormatSGLangBench {
		return spot{format: FormatSGLangBench, path: parent, index: atoi(m[1])}, true
	}
	return spot{}, false
}

// findReport finds the inference-perf report in dir, or in dir/results
// (inference-perf's layout under a run directory): the directory holding
// its stage files.
func findReport(dir string, index int) (spot, bool) {
	for _, d := range []string{dir, filepath.Join(dir, "results")} {
		prefixes := stagePrefixes(d)
		switch {
		case len(prefixes) == 1:
			return spot{format: FormatInferencePerf, path: d, index: index, prefix: prefixes[0]}, true
		case len(prefixes) > 1:
			return spot{format: FormatInferencePerf, path: d, index: index, ambiguous: prefixes}, true
		}
	}
	return spot{}, false
}

// stagePrefixes are the file-name prefixes of the stage files in dir
// ("" for inference-perf's default names), sorted.
func stagePrefixes(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if m := stageFile.FindStringSubmatch(e.Name()); m != nil && e.Type().IsRegular() && !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	slices.Sort(out)
	return out
}

// sniffJSON tells a vllm bench serve result from a guidellm benchmarks
// file by their top-level members, and an SGLang bench_serving result
// (.json or .jsonl: one run a line) by its first line; "" for anything
// else.
func sniffJSON(path string) string {
	ext := filepath.Ext(path)
	if ext != ".json" && ext != ".jsonl" || !isFile(path) {
		return ""
	}
	if ext == ".jsonl" {
		if sniffSGLang(firstLine(path)) {
			return FormatSGLangBench
		}
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(b, &top) != nil {
		if sniffSGLang(b) {
			return FormatSGLangBench
		}
		return ""
	}
	has := func(keys ...string) bool {
		for _, k := range keys {
			if _, ok := top[k]; !ok {
				return false
			}
		}
		return true
	}
	switch {
	case has("benchmarks"):
		return FormatGuideLLM
	case sniffSGLang(b):
		return FormatSGLangBench
	case has("num_prompts", "mean_ttft_ms"):
		return FormatVLLMBench
	}
	return ""
}

// firstLine is the first line of the file at path (nil if unreadable),
// read without the rest: a per-request JSONL may be large.
func firstLine(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadBytes('\n')
	return line
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// atoi converts a regexp-matched run of digits; an absurdly long one
// becomes -2, which no stage or benchmark has.
func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -2
	}
	return n
}
