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

// clientGap is the load generator's gap between a response and its slot's
// next send: measured from the records of a closed-loop run when they are
// all there, else estimated from its aggregate (ClientGap).
func clientGap(p *results.Profile, recs []results.RecordMetrics, wl *traces.Workload) float64 {
	if wl.Concurrency <= 0 || hasTimestamps(wl) {
		return 0
	}
	if n, _ := p.Value(results.TagRequestCount, "avg"); len(recs) > 0 && len(recs) >= int(n) {
		if gap, ok := ClientGapFromRecords(recs, wl.Concurrency); ok {
			return gap
		}
	}
	return ClientGap(p, wl)
}

// LoadTarget opens a real run directory (simbench's or AIPerf's) as a
// calibration target: its aggregate, the workload it replayed, its
// per-request records when it has them, and the client gap.
func LoadTarget(dir string) (Target, error) {
	run, err := results.LoadRun(dir)
	if err != nil {
		return Target{}, err
	}
	wl, err := RunWorkload(dir, run.Profile)
	if err != nil {
		return Target{}, err
	}
	t := Target{Name: run.Name, Profile: run.Profile, Workload: wl}
	if run.RecordsPath != "" {
		if t.Records, err = results.LoadJSONL(run.RecordsPath); err != nil {
			return Target{}, err
		}
	}
	t.ClientGapMs = clientGap(run.Profile, t.Records, wl)
	return t, nil
}
