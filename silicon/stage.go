// Package silicon is simbench's corpus of public GPU serving runs and the
// simulator's predictions of them: each stage (one deployment at one
// constant request rate, measured by others) with its hardware, engine,
// workload and measured figures; the simulator configuration and workload
// that replay it; the GPU timing priors fitted across the corpus with
// leave-one-deployment-out cross-validation; the prediction calibrated on
// each deployment's lightest stage (sim/calibrate, from the stage's
// aggregates); and the fidelity report that puts the predictions beside
// the measurements: errors per stage and metric, medians, each load
// sweep's throughput and saturation, as text, markdown, JSON and a PNG.
package silicon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/simbench/simbench/sim"
)

// Stage is one measured stage of a public deployment: the file format of
// testdata/silicon/runs (see its README).
type Stage struct {
	ID          string             `json:"id"`
	Set         string             `json:"set"`
	Tier        string             `json:"tier"`
	Deployment  string             `json:"deployment"`
	Stage       int                `json:"stage"`
	Source      json.RawMessage    `json:"source"` // provenance: repository, path and commit of each part
	Hardware    Hardware           `json:"hardware"`
	Engine      Engine             `json:"engine"`
	Workload    Workload           `json:"workload"`
	Actual      Figures            `json:"actual"`
	Peers       map[string]Figures `json:"peers"`
	Flags       Flags              `json:"flags"`
	Assumptions []string           `json:"assumptions"`

	path string // the file it was read from
}

// Hardware is a stage's GPU, model and parallelism.
type Hardware struct {
	GPU         string         `json:"gpu"`
	ModelName   string         `json:"model_name"`
	Model       string         `json:"model"` // a preset name or "custom"
	CustomModel *sim.ModelSpec `json:"custom_model"`
	TP          int            `json:"tp"`
	DType       string         `json:"dtype"`
}

// Engine is a stage's vLLM settings.
type Engine struct {
	Type                 string  `json:"type"`
	MaxNumSeqs           int     `json:"max_num_seqs"`
	MaxNumBatchedTokens  int     `json:"max_num_batched_tokens"`
	MaxModelLen          int     `json:"max_model_len"`
	EnablePrefixCaching  bool    `json:"enable_prefix_caching"`
	EnableChunkedPrefill bool    `json:"enable_chunked_prefill"`
	GPUMemoryUtilization float64 `json:"gpu_memory_utilization"`
	BlockSize            int     `json:"block_size"`
	NumGPUBlocks         int     `json:"num_gpu_blocks"` // 0: not published, sized from memory
	CPUKVBlocks          *int    `json:"cpu_kv_blocks"`
	Workers              int     `json:"workers"`
}

// Workload is inference-perf's shared_prefix generator at one rate, under
// its "constant" load type (Arrival; see Stage.Replay for what its timer
// sends): NumGroups system prompts × PromptsPerGroup users, prompt =
// system prompt + question, cycled in order.
type Workload struct {
	Generator            string   `json:"generator"`
	API                  string   `json:"api"`
	Streaming            bool     `json:"streaming"`
	IgnoreEOS            bool     `json:"ignore_eos"`
	Arrival              string   `json:"arrival"`
	Rate                 float64  `json:"rate"`
	DurationS            float64  `json:"duration_s"`
	Requests             int      `json:"requests"`
	ISL                  int      `json:"isl"`
	ISLSource            string   `json:"isl_source"`
	OSL                  int      `json:"osl"`
	SystemPromptLen      int      `json:"system_prompt_len"`
	QuestionLen          int      `json:"question_len"`
	NumGroups            int      `json:"num_groups"`
	PromptsPerGroup      int      `json:"prompts_per_group"`
	UniquePrompts        int      `json:"unique_prompts"`
	MultiTurn            bool     `json:"multi_turn"`
	ClientConcurrencyCap *int     `json:"client_concurrency_cap"`
	MeasuredRequests     *int     `json:"measured_requests"`
	AchievedRate         *float64 `json:"achieved_rate"`
}

// Figures are a stage's latencies (ms) and throughput as published: any
// may be absent. ITLMean is (E2E mean − TTFT mean)/(OSL − 1).
type Figures struct {
	TTFTMean          *float64 `json:"ttft_mean,omitempty"`
	TTFTP50           *float64 `json:"ttft_p50,omitempty"`
	TTFTP90           *float64 `json:"ttft_p90,omitempty"`
	TTFTP99           *float64 `json:"ttft_p99,omitempty"`
	E2EMean           *float64 `json:"e2e_mean,omitempty"`
	E2EP50            *float64 `json:"e2e_p50,omitempty"`
	E2EP90            *float64 `json:"e2e_p90,omitempty"`
	E2EP99            *float64 `json:"e2e_p99,omitempty"`
	ITLMean           *float64 `json:"itl_mean,omitempty"`
	RequestThroughput *float64 `json:"request_throughput,omitempty"`
	// CompletionRate is a simulation's steady completion rate
	// (results.CompletionRate of its measured requests), requests/s: what
	// the simulated server achieved at the stage's rate however short the
	// replay. The corpus does not publish it.
	CompletionRate *float64 `json:"-"`
}

// Flags mark a stage's standing: a saturated server, or a stage that a
// peer's published model was fitted on.
type Flags struct {
	Saturated    bool `json:"saturated"`
	BLISInSample bool `json:"blis_in_sample"`
}

// Path is the file the stage was read from.
func (s *Stage) Path() string { return s.path }

// Load reads stages from files and directories (every *.json in a
// directory), sorted by deployment and stage. A file that does not decode
// strictly, or a stage that fails its checks, is an error naming the file
// and the field.
func Load(paths ...string) ([]*Stage, error) {
	var files []string
	for _, p := range paths {
		fs, err := stageFiles(p)
		if err != nil {
			return nil, err
		}
		files = append(files, fs...)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no stage files (*.json) in %s", strings.Join(paths, ", "))
	}
	stages := make([]*Stage, 0, len(files))
	seen := map[string]string{}
	for _, f := range files {
		s, err := LoadStage(f)
		if err != nil {
			return nil, err
		}
		if prev, dup := seen[s.ID]; dup {
			return nil, fmt.Errorf("%s: id %q: also in %s", f, s.ID, prev)
		}
		seen[s.ID] = f
		stages = append(stages, s)
	}
	slices.SortFunc(stages, func(a, b *Stage) int {
		return cmpStage(a, b)
	})
	return stages, nil
}

func cmpStage(a, b *Stage) int {
	if c := strings.Compare(a.Deployment, b.Deployment); c != 0 {
		return c
	}
	return a.Stage - b.Stage
}

// stageFiles is p when it is a file, else the *.json files in it (and in
// its runs/ folder, the corpus layout).
func stageFiles(p string) ([]string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{p}, nil
	}
	files, err := filepath.Glob(filepath.Join(p, "*.json"))
	if err != nil {
		return nil, err
	}
	runs, err := filepath.Glob(filepath.Join(p, "runs", "*.json"))
	if err != nil {
		return nil, err
	}
	return append(files, runs...), nil
}

// LoadStage reads one stage file strictly (unknown fields are errors).
func LoadStage(path string) (*Stage, error) {
	var s Stage
	if err := decodeStrict(path, &s); err != nil {
		return nil, err
	}
	s.path = path
	if err := s.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &s, nil
}

// decodeStrict reads the JSON file at path into v; unknown fields are
// errors, and every error names the file.
func decodeStrict(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func (s *Stage) validate() error {
	if s.ID == "" || s.Deployment == "" {
		return errors.New("id and deployment: required")
	}
	checks := []struct {
		field string
		ok    bool
	}{
		{"hardware.tp", s.Hardware.TP > 0},
		{"engine.block_size", s.Engine.BlockSize > 0},
		{"engine.max_num_seqs", s.Engine.MaxNumSeqs > 0},
		{"engine.max_num_batched_tokens", s.Engine.MaxNumBatchedTokens > 0},
		{"engine.num_gpu_blocks", s.Engine.NumGPUBlocks >= 0},
		{"workload.rate", s.Workload.Rate > 0 && !math.IsInf(s.Workload.Rate, 0)},
		{"workload.requests", s.Workload.Requests > 0},
		{"workload.isl", s.Workload.ISL > 0},
		{"workload.osl", s.Workload.OSL > 1},
		{"workload.unique_prompts", s.Workload.UniquePrompts > 0},
		{"actual.ttft_mean", s.Actual.TTFTMean != nil && *s.Actual.TTFTMean > 0},
		{"actual.e2e_mean", s.Actual.E2EMean != nil && *s.Actual.E2EMean > 0},
	}
	for _, c := range checks {
		if !c.ok {
			return fmt.Errorf("%s: missing or out of range", c.field)
		}
	}
	if s.Workload.Arrival != "constant" {
		return fmt.Errorf("workload.arrival: %q, want constant", s.Workload.Arrival)
	}
	return nil
}
