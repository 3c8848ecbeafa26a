package validate

import (
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

func TestValidateExamplePipelinesLoad(t *testing.T) {
	for _, f := range []string{"pipeline-example.yaml", "pipeline-ollama.yaml"} {
		p, err := Load(filepath.Join("..", "testdata", "validate", f))
		require.NoError(t, err, f)
		assert.FileExists(t, p.Resolve(p.Sim.Config), f)
		assert.Equal(t, CalibrateFromSilicon, p.Sim.CalibrateFrom)
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
