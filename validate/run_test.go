package validate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/simbench/simbench/compare"
	"github.com/simbench/simbench/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeArm is an arm without a server: it writes a simulated run of the
// pipeline's workload on the default configuration, overheadMs added to
// every request's frontend overhead (a slower "server"), or fails with
// err.
type fakeArm struct {
	p          *Pipeline
	overheadMs float64
	err        error
	runs       int
	seeds      []*int64 // the seed of every run
}

func (a *fakeArm) Run(ctx context.Context, dir string, seed *int64, _ io.Writer) error {
	a.runs++
	a.seeds = append(a.seeds, seed)
	if a.err != nil {
		return a.err
	}
	cfg := sim.DefaultConfig()
	cfg.Frontend.RequestOverheadMs += a.overheadMs
	if seed != nil {
		cfg.Seed = *seed
	}
	wl, _, err := a.p.workload().Build(0)
	if err != nil {
		return err
	}
	input, err := sim.WorkloadInput(a.p.workload(), wl)
	if err != nil {
		return err
	}
	_, err = sim.WriteRun(ctx, dir, cfg, wl, input)
	return err
}

// fakePipeline writes and loads a pipeline of 24 synthetic requests whose
// TTFT average is bounded at 10 %; its target is never contacted (no
// health check, fake arms).
func fakePipeline(t *testing.T) *Pipeline {
	t.Helper()
	dir := t.TempDir()
	cfg, err := filepath.Abs(filepath.Join("..", "testdata", "sim", "vllm-h100-llama8b.yaml"))
	require.NoError(t, err)
	path := filepath.Join(dir, "pipeline.yaml")
	require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf(`target: {url: http://127.0.0.1:1, model: m}
workload: {concurrency: 2, request_count: 24, isl: 200, osl: 30, random_seed: 1}
sim: {config: %s}
compare:
  fail_above: [time_to_first_token.avg=10%%]
  plots: false
`, cfg)), 0o644))
	p, err := Load(path)
	require.NoError(t, err)
	return p
}

// TestRunWithFakeArms drives the whole pipeline (arms, comparison,
// reports, history) with fake arms: the same run on both sides passes,
// a simulated arm 50 ms slower breaches the TTFT bound, an arm's error
// stops the validation and is still recorded, and every validation adds
// one history line.
func TestRunWithFakeArms(t *testing.T) {
	for name, tc := range map[string]struct {
		simOverheadMs float64
		realErr       error
		verdict       string
		breaches      []string
		err           string
	}{
		"pass":          {verdict: compare.Pass},
		"breach":        {simOverheadMs: 50, verdict: compare.Breach, breaches: []string{"time_to_first_token.avg"}},
		"silicon error": {realErr: errors.New("server gone"), verdict: "error", err: "server gone"},
	} {
		t.Run(name, func(t *testing.T) {
			p := fakePipeline(t)
			real, simArm := &fakeArm{p: p, err: tc.realErr}, &fakeArm{p: p, overheadMs: tc.simOverheadMs}
			out := filepath.Join(t.TempDir(), "out")
			res, err := Run(context.Background(), p, Options{Out: out, Quiet: true, Real: real, Sim: simArm})
			hist, herr := ReadHistory(DefaultHistoryPath(out))
			require.NoError(t, herr)
			require.Len(t, hist, 1, "one history line, also after a failure")
			assert.Equal(t, tc.verdict, hist[0].Verdict)
			assert.Equal(t, 1, real.runs)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				assert.Contains(t, hist[0].Error, tc.err)
				assert.Zero(t, simArm.runs, "the silicon arm runs first; its failure stops the validation")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, 1, simArm.runs)
			assert.Equal(t, hist[0], res.Entry)
			assert.Equal(t, tc.breaches, hist[0].Breaches)
			assert.Equal(t, len(tc.breaches), len(res.Breaches()))
			assert.Contains(t, hist[0].Metrics, "time_to_first_token.avg")
			assert.Equal(t, 10.0, hist[0].Bounds["time_to_first_token.avg"])
			assert.FileExists(t, filepath.Join(out, CompareJSONName))
		})
	}
}

// TestRunAppendsHistory: a second validation into the same directory
// appends its line after the first, and repeat: 2 runs each arm three
// times (a warm-up round, then two) with the simulator seeds by round.
func TestRunAppendsHistory(t *testing.T) {
	p := fakePipeline(t)
	out := filepath.Join(t.TempDir(), "out")
	for range 2 {
		_, err := Run(context.Background(), p, Options{Out: out, Quiet: true, Real: &fakeArm{p: p}, Sim: &fakeArm{p: p, overheadMs: 50}})
		require.NoError(t, err)
	}
	hist, err := ReadHistory(DefaultHistoryPath(out))
	require.NoError(t, err)
	require.Len(t, hist, 2)
	for _, e := range hist {
		assert.Equal(t, compare.Breach, e.Verdict)
		assert.Equal(t, p.Digest(), e.ConfigDigest)
	}

	p.Repeat = 2
	real, simArm := &fakeArm{p: p}, &fakeArm{p: p}
	_, err = Run(context.Background(), p, Options{Out: filepath.Join(t.TempDir(), "rep"), Quiet: true, Real: real, Sim: simArm})
	require.NoError(t, err)
	assert.Equal(t, []*int64{nil, nil, nil}, real.seeds, "the silicon arm has no seed")
	require.Len(t, simArm.seeds, 3)
	base := *simArm.seeds[0]
	assert.Equal(t, []int64{base, base, base + 1}, []int64{*simArm.seeds[0], *simArm.seeds[1], *simArm.seeds[2]},
		"the warm-up and the first round on the base seed, the second on the next")
}
