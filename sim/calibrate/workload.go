package calibrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// inputConfig is the part of AIPerf's (and simbench's) input_config that
// describes the workload.
type inputConfig struct {
	Loadgen struct {
		Concurrency    int     `json:"concurrency"`
		RequestCount   int     `json:"request_count"`
		Warmup         int     `json:"warmup_request_count"`
		RequestRate    float64 `json:"request_rate"`
		ArrivalPattern string  `json:"arrival_pattern"`
		RandomSeed     *int64  `json:"random_seed"`
	} `json:"loadgen"`
	Input struct {
		File       string `json:"file"`
		RandomSeed *int64 `json:"random_seed"`
		Prompt     *struct {
			InputTokens  lengthSpec `json:"input_tokens"`
			OutputTokens lengthSpec `json:"output_tokens"`
		} `json:"prompt"`
	} `json:"input"`
}

type lengthSpec struct {
	Mean      float64 `json:"mean"`
	Stddev    float64 `json:"stddev"`
	BlockSize int     `json:"block_size"`
}

// RunWorkload rebuilds the workload a run directory replayed: the exact
// workload.jsonl simbench keeps beside its files, else the synthetic
// workload AIPerf's input_config describes (concurrency or rate, ISL/OSL
// mean and stddev, request and warmup counts, seed), else the trace file it
// names.
func RunWorkload(dir string, p *results.Profile) (*traces.Workload, error) {
	var ic inputConfig
	if len(p.InputConfig) > 0 {
		if err := json.Unmarshal(p.InputConfig, &ic); err != nil {
			return nil, fmt.Errorf("%s: input_config: %w", dir, err)
		}
	}
	if path := filepath.Join(dir, traces.WorkloadFile); fileExists(path) {
		wl, _, err := traces.LoadMooncake(path)
		if err != nil {
			return nil, err
		}
		wl.Concurrency = ic.Loadgen.Concurrency
		return wl, nil
	}
	if ic.Input.Prompt != nil {
		return synthesized(ic)
	}
	if ic.Input.File != "" && fileExists(ic.Input.File) {
		wl, _, err := traces.LoadMooncake(ic.Input.File)
		if err != nil {
			return nil, err
		}
		wl.Concurrency = ic.Loadgen.Concurrency
		return wl, nil
	}
	return nil, fmt.Errorf("%s: cannot rebuild the workload: no %s, and input_config names neither a synthetic prompt nor a readable trace file", dir, traces.WorkloadFile)
}

func synthesized(ic inputConfig) (*traces.Workload, error) {
	pr := ic.Input.Prompt
	spec := traces.SynthSpec{Mode: traces.ModeConcurrency, Concurrency: ic.Loadgen.Concurrency,
		RequestCount: ic.Loadgen.RequestCount, WarmupCount: ic.Loadgen.Warmup,
		ISL: int(pr.InputTokens.Mean), ISLStddev: int(pr.InputTokens.Stddev),
		OSL: int(pr.OutputTokens.Mean), OSLStddev: int(pr.OutputTokens.Stddev), BlockSize: pr.InputTokens.BlockSize}
	switch {
	case ic.Loadgen.RandomSeed != nil:
		spec.Seed = *ic.Loadgen.RandomSeed
	case ic.Input.RandomSeed != nil:
		spec.Seed = *ic.Input.RandomSeed
	}
	if ic.Loadgen.RequestRate > 0 {
		spec.Mode, spec.Rate = rateMode(ic.Loadgen.ArrivalPattern), ic.Loadgen.RequestRate
	}
	if spec.RequestCount <= 0 {
		return nil, errors.New("input_config: loadgen.request_count is missing")
	}
	return traces.Synthesize(spec)
}

func rateMode(pattern string) string {
	switch pattern {
	case traces.ModeConstant, traces.ModeGamma:
		return pattern
	}
	return traces.ModePoisson
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// EstimateClientGap is the client gap of a run directory's closed-loop run:
// from its records when they cover every request, else from its aggregate
// (ClientGap).
func EstimateClientGap(run *results.Run, wl *traces.Workload) (float64, error) {
	if wl.Concurrency <= 0 || hasTimestamps(wl) {
		return 0, nil
	}
	n, _ := run.Profile.Value(results.TagRequestCount, "avg")
	if run.RecordsPath != "" {
		recs, err := results.LoadJSONL(run.RecordsPath)
		if err != nil {
			return 0, err
		}
		if len(recs) >= int(n) {
			if gap, ok := ClientGapFromRecords(recs, wl.Concurrency); ok {
				return gap, nil
			}
		}
	}
	return ClientGap(run.Profile, wl), nil
}
