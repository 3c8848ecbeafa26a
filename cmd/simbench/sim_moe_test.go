package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
)

// TestSimMoEModelConfig simulates Mixtral-8x7B from its config.json on two
// H100s, one request at a time (ISL 100, OSL 50), and checks the decode
// step each timing model prices by hand. A decode of one token reads its
// 2 experts in each of 32 layers: 32·41,975,808 + 64·176,160,768 =
// 12,617,515,008 layer weights, and the LM head 131,072,000, at 2 B:
// 25,497,174,016 B; its KV is 131,072 B a token over about 126 tokens;
// the all-reduces move 2·32·4096·2 B = 524,288 B, half of it over 450 GB/s
// (1.165 µs), and pay 2·32·6.6 µs = 422.4 µs.
//
//	roofline: (25,497,174,016 + 262,144,000 input embedding + 126·131,072)
//	          / (3350 GB/s·2·0.6) = 6.4119 ms, + 423.565 µs/0.6 = 0.7059 ms,
//	          + 1 ms overhead = 8.118 ms.
//	physics:  (25,497,174,016 + 127·131,072)/(3350 GB/s·2) + 423.565 µs
//	          = 4.2316 ms, /0.7 = 6.0451 ms; compute 2·12,617,515,008
//	          + 2·131,072,000 + 524,288·126 FLOPs / (989.5 T·2) / 0.5
//	          = 0.0258 ms; + 1 ms step + 0.02 ms sequence = 7.091 ms.
func TestSimMoEModelConfig(t *testing.T) {
	for _, tc := range []struct {
		timing string
		itlMs  float64
	}{{"roofline", 8.118}, {"physics", 7.091}} {
		t.Run(tc.timing, func(t *testing.T) {
			dir := t.TempDir()
			// The hand-set physics prior the values below are computed with
			// (the test is about the counts, not the fitted priors).
			cfgPath := filepath.Join(t.TempDir(), "sim.yaml")
			require.NoError(t, os.WriteFile(cfgPath, []byte("timing:\n  physics: {compute_efficiency: 0.5, memory_efficiency: 0.7, "+
				"kv_efficiency: 0, step_overhead_ms: 1, seq_overhead_ms: 0.02, prefill_overhead_ms: 0, combine: sum}\n"), 0o644))
			code, out, errOut := runSim(t, "--config", cfgPath, "--timing", tc.timing, "--gpu", "h100", "--tp", "2",
				"--model-config", "../../testdata/models/mixtral-8x7b.json",
				"--concurrency", "1", "--request-count", "4", "--isl", "100", "--osl", "50", "-o", dir)
			require.Equal(t, exitOK, code, errOut)
			assert.Contains(t, out, "simulated 4 requests")
			var exp struct {
				InputConfig struct {
					Sim struct{ Hardware sim.HardwareConfig }
				} `json:"input_config"`
			}
			require.NoError(t, json.Unmarshal(runReadFile(t, filepath.Join(dir, results.ProfileJSONName)), &exp))
			hw := exp.InputConfig.Sim.Hardware
			assert.Equal(t, "../../testdata/models/mixtral-8x7b.json", hw.ModelConfig)
			assert.Empty(t, hw.Model, "not the default preset's name")
			p, _ := requireSelfConsistent(t, dir)
			itl, ok := p.Value("inter_token_latency", "avg")
			require.True(t, ok)
			assert.InEpsilon(t, tc.itlMs, itl, 0.002)
		})
	}
}

// TestSimBadModelConfig: a config.json the simulator cannot read stops the
// run before any file is written, naming the key, the file and its line.
func TestSimBadModelConfig(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "config.json")
	require.NoError(t, os.WriteFile(bad, []byte("{\n\"model_type\": \"mixtral\",\n\"hidden_size\": \"4096\"\n}\n"), 0o644))
	yaml := filepath.Join(dir, "sim.yaml")
	require.NoError(t, os.WriteFile(yaml, []byte("hardware:\n  model_config: "+bad+"\n"), 0o644))
	out := filepath.Join(dir, "run")
	code, _, errOut := runSim(t, "--config", yaml, "--concurrency", "1", "--request-count", "2", "--isl", "10", "--osl", "5", "-o", out)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "hardware.model_config: "+bad+": line 3: hidden_size: want int, got string")
	_, err := os.Stat(out)
	assert.True(t, os.IsNotExist(err), "no run directory: %v", err)
}
