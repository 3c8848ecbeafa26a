package calibrate

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// RunWorkload rebuilds the workload a run directory replayed: the exact
// workload.jsonl simbench keeps beside its files, else the workload spec
// simbench records (input_config.workload.spec: the trace and every
// transform, or the synthetic keys), else the synthetic workload AIPerf's
// input_config describes (concurrency or rate, ISL/OSL mean and stddev,
// request and warmup counts, seed), else the trace file it names. A run
// that records its workload's digest (simbench's) must get that workload
// back: any other is an error, not a fit to other requests.
func RunWorkload(dir string, p *results.Profile) (*traces.Workload, error) {
	ic, err := results.ParseInputConfig(p.InputConfig)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	wl, from, err := rebuildWorkload(dir, ic)
	if err != nil {
		return nil, err
	}
	if want := recordedDigest(ic); want != "" && wl.Digest != want {
		return nil, fmt.Errorf("%s: the workload rebuilt from %s (digest %s) is not the one the run replayed "+
			"(input_config digest %s): calibrating on it would fit other requests than the ones measured", dir, from, wl.Digest, want)
	}
	return wl, nil
}

// recordedDigest is the digest of the workload the run directory itself
// replayed: a shard's own part, else input_config.workload's ("" when the
// run records none, as AIPerf's).
func recordedDigest(ic results.InputConfig) string {
	switch {
	case ic.Simbench != nil && ic.Simbench.Shard != nil:
		return ic.Simbench.Shard.Digest
	case ic.Workload != nil:
		return ic.Workload.Digest
	}
	return ""
}

// rebuildWorkload builds the workload again (see RunWorkload) and says
// from what.
func rebuildWorkload(dir string, ic results.InputConfig) (*traces.Workload, string, error) {
	var lg results.LoadgenConfig
	if ic.Loadgen != nil {
		lg = *ic.Loadgen
	}
	var in results.InputSection
	if ic.Input != nil {
		in = *ic.Input
	}
	if path := filepath.Join(dir, traces.WorkloadFile); fileExists(path) {
		wl, _, err := traces.LoadMooncakeBlocks(path, hashBlockSize(ic))
		if err != nil {
			return nil, "", err
		}
		wl.Concurrency = lg.Concurrency
		return wl, path, nil
	}
	if ic.Workload != nil && len(ic.Workload.Spec) > 0 {
		wl, err := traces.BuildJSON(ic.Workload.Spec, lg.BenchmarkDuration)
		if err != nil {
			return nil, "", fmt.Errorf("%s: rebuilding the workload from input_config.workload.spec: %w", dir, err)
		}
		return wl, "input_config.workload.spec", nil
	}
	if in.Prompt != nil {
		wl, err := synthesized(lg, in)
		return wl, "input_config.input.prompt", err
	}
	if in.File != "" && fileExists(in.File) {
		wl, _, err := traces.LoadMooncake(in.File)
		if err != nil {
			return nil, "", err
		}
		wl.Concurrency = lg.Concurrency
		return wl, in.File, nil
	}
	return nil, "", fmt.Errorf("%s: cannot rebuild the workload: no %s, and input_config names neither a synthetic prompt nor a readable trace file", dir, traces.WorkloadFile)
}

// hashBlockSize is the tokens per hash_ids block of the workload a run
// replayed: input_config.workload's (simbench's), else the synthetic
// prompt's (AIPerf's), else Mooncake's 512. WriteWorkloadFile keeps the
// hash_ids as the run used them, at whatever --block-size it had.
func hashBlockSize(ic results.InputConfig) int {
	switch {
	case ic.Workload != nil && ic.Workload.BlockSize > 0:
		return ic.Workload.BlockSize
	case ic.Input != nil && ic.Input.Prompt != nil && ic.Input.Prompt.InputTokens.BlockSize != nil:
		return *ic.Input.Prompt.InputTokens.BlockSize
	}
	return traces.MooncakeBlockSize
}

func synthesized(lg results.LoadgenConfig, in results.InputSection) (*traces.Workload, error) {
	pr := in.Prompt
	spec := traces.SynthSpec{Mode: traces.ModeConcurrency, Concurrency: lg.Concurrency,
		RequestCount: lg.RequestCount, ISL: int(pr.InputTokens.Mean), ISLStddev: int(pr.InputTokens.Stddev),
		OSL: int(pr.OutputTokens.Mean), OSLStddev: int(pr.OutputTokens.Stddev)}
	if lg.WarmupRequestCount != nil {
		spec.WarmupCount = *lg.WarmupRequestCount
	}
	if pr.InputTokens.BlockSize != nil {
		spec.BlockSize = *pr.InputTokens.BlockSize
	}
	switch {
	case lg.RandomSeed != nil:
		spec.Seed = *lg.RandomSeed
	case in.RandomSeed != nil:
		spec.Seed = *in.RandomSeed
	}
	if lg.RequestRate > 0 {
		mode, err := rateMode(lg.ArrivalPattern)
		if err != nil {
			return nil, err
		}
		spec.Mode, spec.Rate = mode, lg.RequestRate
		if k := lg.ArrivalSmoothness; mode == traces.ModeGamma && k != nil {
			if !(*k > 0) || math.IsInf(*k, 1) {
				return nil, fmt.Errorf("input_config: loadgen.arrival_smoothness %v: want a gamma shape > 0", *k)
			}
			spec.GammaShape = *k
		}
	}
	if spec.RequestCount <= 0 {
		return nil, errors.New("input_config: loadgen.request_count is missing")
	}
	return traces.Synthesize(spec)
}

// rateMode is the arrival process of an open-loop run's
// loadgen.arrival_pattern: AIPerf's (constant, poisson, gamma; poisson
// when unset) or simbench's poisson-span (what a converted inference-perf
// run's "constant" load type is). Anything else is an error: replaying it
// as another process would calibrate against arrivals the run never sent.
func rateMode(pattern string) (string, error) {
	switch pattern {
	case traces.ModeConstant, traces.ModeGamma, traces.ModePoisson, traces.ModePoissonSpan:
		return pattern, nil
	case "":
		return traces.ModePoisson, nil
	}
	return "", fmt.Errorf("input_config: loadgen.arrival_pattern %q with a request_rate: want %s, %s, %s or %s",
		pattern, traces.ModeConstant, traces.ModePoisson, traces.ModeGamma, traces.ModePoissonSpan)
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
	if wl.Concurrency > 0 && !hasTimestamps(wl) {
		t.ClientGapsMs, t.ClientStallMs, t.ClientStallEveryMs = clientStalls(ClientGaps(t.Records, wl.Concurrency),
			t.ClientGapMs, run.Profile, wl.Concurrency)
	}
	return t, nil
}
