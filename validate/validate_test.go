package validate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWorkloadResolvesTrace(t *testing.T) {
	p, err := parsePipeline([]byte("workload:\n  trace: t.jsonl\n  speedup: 0.5\n  auto_offset: true\n  limit: 40\n  random_seed: 7\n"))
	require.NoError(t, err)
	p.dir = "/pipelines"
	assert.Equal(t, []string{"trace=/pipelines/t.jsonl", "auto_offset=true", "speedup=0.5", "limit=40",
		"random_seed=7"}, p.workload().Keys())
	assert.Equal(t, "t.jsonl", *p.Workload.Trace, "the pipeline keeps the path as written")
}

// TestValidateExamplePipelinesLoad: the example pipelines load; the
// documented example holds the scored run out of its calibration, the
// Ollama ones calibrate on their own silicon and say they are in-sample.
func TestValidateExamplePipelinesLoad(t *testing.T) {
	for f, tt := range map[string]struct {
		from     string
		inSample string
	}{
		"pipeline-example.yaml":      {CalibrateFromLive, ""},
		"pipeline-ollama.yaml":       {CalibrateFromSilicon, "calibrated on the scored silicon run"},
		"pipeline-ollama-sweep.yaml": {CalibrateFromSilicon, "lowest load (concurrency 1)"},
	} {
		p, err := Load(filepath.Join("..", "testdata", "validate", f))
		require.NoError(t, err, f)
		assert.FileExists(t, p.Resolve(p.Sim.Config), f)
		assert.Equal(t, tt.from, p.Sim.CalibrateFrom, f)
		if tt.inSample == "" {
			assert.Empty(t, p.inSample(), f)
		} else {
			assert.Contains(t, p.inSample(), tt.inSample, f)
		}
	}
}

// TestInSample: only a calibration on a silicon run the comparison scores
// is in-sample.
func TestInSample(t *testing.T) {
	for name, tt := range map[string]struct {
		yaml string
		want string
	}{
		"no calibration":      {"sim: {config: s.yaml}\n", ""},
		"silicon, one round":  {"sim: {calibrate: true}\n", "calibrated on the scored silicon run"},
		"silicon, repeat 4":   {"sim: {calibrate: true}\nrepeat: 4\n", ""},
		"live plan":           {"sim: {calibrate: true, calibrate_from: live}\n", ""},
		"another run":         {"sim: {calibrate: true, calibrate_from: runs/c1}\n", ""},
		"sweep's lowest load": {"sim: {calibrate: true}\nsweep: {concurrency: \"2,4\"}\n", "lowest load (concurrency 2)"},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := parsePipeline([]byte("target: {url: http://h, model: m}\nworkload: {request_count: 8}\n" + tt.yaml))
			require.NoError(t, err)
			require.NoError(t, p.check())
			if tt.want == "" {
				assert.Empty(t, p.inSample())
				return
			}
			assert.Contains(t, p.inSample(), tt.want)
		})
	}
}

func TestSchedule(t *testing.T) {
	assert.Equal(t, []scheduledRun{{armReal, 0}, {armSim, 0}}, schedule(2, 1))
	assert.Equal(t, []scheduledRun{{armReal, warmupRound}, {armSim, warmupRound},
		{armReal, 0}, {armSim, 0}, {armSim, 1}, {armReal, 1}, {armReal, 2}, {armSim, 2}}, schedule(2, 3))
	assert.Equal(t, []int{2, 0, 1}, roundOrder(3, 2))
}

func TestHealthURL(t *testing.T) {
	assert.Equal(t, "http://localhost:8000/v1/models", healthURL("localhost:8000/", "/v1/models"))
	assert.Equal(t, "https://h/api/v1/models", healthURL(" https://h/api ", "/v1/models"))
}

func TestLatestBound(t *testing.T) {
	assert.Equal(t, 10.0, latestBound([]HistoryEntry{{Bounds: map[string]float64{"time_to_first_token.avg": 10}}}, "time_to_first_token"))
	assert.Equal(t, 0.0, latestBound([]HistoryEntry{{Bounds: map[string]float64{"time_to_first_token.avg": 10,
		"time_to_first_token.p99": 20}}}, "time_to_first_token"), "several bounds: none drawn")
}

func TestSweepSectionChecks(t *testing.T) {
	base := "target: {url: http://h, model: m}\nsim: {config: s.yaml}\ngoodput: \"time_to_first_token:60\"\n"
	for name, tt := range map[string]struct{ yaml, want string }{
		"no load list":  {"workload: {request_count: 8}\nsweep: {attainment: 0.9}\n", "give concurrency"},
		"repeat":        {"workload: {request_count: 8}\nsweep: {concurrency: \"1,2\"}\nrepeat: 3\n", "exclude each other"},
		"concurrency":   {"workload: {concurrency: 2, request_count: 8}\nsweep: {concurrency: \"1,2\"}\n", "drop --concurrency"},
		"bad list":      {"workload: {request_count: 8}\nsweep: {concurrency: \"1,x\"}\n", "sweep"},
		"both loads":    {"workload: {request_count: 8}\nsweep: {concurrency: \"1,2\", request_rate: 1}\n", "exclude each other"},
		"attainment":    {"workload: {request_count: 8}\nsweep: {concurrency: \"1,2\", attainment: 1.5}\n", "attainment"},
		"unknown field": {"workload: {request_count: 8}\nsweep: {concurrency: \"1,2\", stop: true}\n", "unknown key \"sweep.stop\""},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p.yaml")
			require.NoError(t, os.WriteFile(path, []byte(base+tt.yaml), 0o644))
			_, err := Load(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	path := filepath.Join(t.TempDir(), "p.yaml")
	require.NoError(t, os.WriteFile(path, []byte(base+"workload: {request_count: 8}\nsweep: {concurrency: 1..8x2}\n"), 0o644))
	p, err := Load(path)
	require.NoError(t, err)
	plan, err := p.sweepPlan()
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, 4, 8}, plan.Loads)
	assert.Equal(t, 0.9, plan.Target)
}

// TestEndpointTokenizer: target.tokenizer (relative to the pipeline file)
// and per_chunk_usage reach the load generator, as run's flags do.
func TestEndpointTokenizer(t *testing.T) {
	p, err := parsePipeline([]byte("target: {url: http://h, model: m, tokenizer: tok, use_server_token_count: true, per_chunk_usage: true}\n"))
	require.NoError(t, err)
	p.dir = t.TempDir()
	v := newValidation(p, Options{})
	_, err = v.endpoint()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "target.tokenizer: --tokenizer: tokenizer:")
	assert.Contains(t, err.Error(), filepath.Join(p.dir, "tok"))
	p.Target.Tokenizer = ""
	ep, err := v.endpoint()
	require.NoError(t, err)
	assert.True(t, ep.PerChunkUsage)
}
