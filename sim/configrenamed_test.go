package sim

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/traces"
)

// The load generator's knobs moved from frontend: to client:. A file with
// the old keys loads as the new ones, says so, and simulates the same.
func TestRenamedClientKeysSimulateAlike(t *testing.T) {
	const common = "workers: 1\nengine:\n  type: vllm\n  block_size: 16\n  num_gpu_blocks: 1000\n" +
		"timing:\n  model: linear\n  linear:\n    base_ms: 10\n    prefill_token_ms: 0.1\n"
	oldDoc := common + "frontend:\n  concurrency: 1\n  prompt_token_ms: 0.01\n  client_gap_samples_ms: [1, 7, 40]\n" +
		"  client_stall_ms: 25\n  client_stall_every_ms: 300\n  tie_order: random\n  client_gap_ms: 3\n"
	newDoc := common + "frontend:\n  concurrency: 1\n  prompt_token_ms: 0.01\n" +
		"client:\n  gap_samples_ms: [1, 7, 40]\n  stall_ms: 25\n  stall_every_ms: 300\n  tie_order: random\n  gap_ms: 3\n"
	oldCfg, err := ParseConfig([]byte(oldDoc))
	require.NoError(t, err)
	newCfg, err := ParseConfig([]byte(newDoc))
	require.NoError(t, err)
	require.NoError(t, oldCfg.Validate())

	assert.Empty(t, newCfg.KeyWarnings())
	var warned []string
	for _, w := range oldCfg.KeyWarnings() {
		warned = append(warned, w.Error())
	}
	assert.Equal(t, []string{
		"line 18: frontend.client_gap_ms is deprecated, read as client.gap_ms (the load generator's, apart from the server's frontend:)",
		"line 14: frontend.client_gap_samples_ms is deprecated, read as client.gap_samples_ms (the load generator's, apart from the server's frontend:)",
		"line 15: frontend.client_stall_ms is deprecated, read as client.stall_ms (the load generator's, apart from the server's frontend:)",
		"line 16: frontend.client_stall_every_ms is deprecated, read as client.stall_every_ms (the load generator's, apart from the server's frontend:)",
		"line 17: frontend.tie_order is deprecated, read as client.tie_order (the load generator's, apart from the server's frontend:)",
	}, warned)
	newCfg.keyWarnings = oldCfg.keyWarnings
	assert.Equal(t, newCfg, oldCfg, "the same configuration")

	var reqs []traces.Request
	for i := range 12 {
		reqs = append(reqs, req(0, 20+30*(i%4), 3+i%3))
		reqs[i].HasTimestamp = false
	}
	wl := workload(reqs...)
	wl.Concurrency = 3
	oldRecs, _ := runAll(t, oldCfg, wl)
	newRecs, _ := runAll(t, newCfg, wl)
	assert.Equal(t, newRecs, oldRecs, "the same simulation")
	plain, _ := runAll(t, constCfg("vllm", 10, 0.1), wl)
	assert.NotEqual(t, plain, oldRecs, "the client's knobs took effect")
}

func TestRenamedKeyGivenBothWays(t *testing.T) {
	_, err := ParseConfig([]byte("client:\n  gap_ms: 2\nfrontend:\n  client_gap_ms: 3\n"))
	assert.EqualError(t, err, "line 4: frontend.client_gap_ms is client.gap_ms (line 2) under its old name; keep client.gap_ms")
	cfg, err := ParseConfig([]byte("client:\nfrontend:\n  tie_order: random\n"))
	require.NoError(t, err, "a null client: section takes the moved key")
	assert.Equal(t, TieOrderRandom, cfg.Client.TieOrder)
}

func TestCurrentKey(t *testing.T) {
	for _, r := range renamedKeys {
		got, ok := CurrentKey(r.old)
		assert.True(t, ok, r.old)
		assert.Equal(t, r.new, got)
		_, ok = CurrentKey(r.new)
		assert.False(t, ok, r.new)
		assert.NotEmpty(t, configDocs[r.new], "%s is a documented key", r.new)
		assert.Empty(t, configDocs[r.old], "%s is no key any more", r.old)
	}
}

// An explicit frontend.mode simulates as the one its keys imply; a mode
// the keys contradict is refused.
func TestFrontendMode(t *testing.T) {
	base := constCfg("vllm", 10, 0.1)
	base.Frontend.RequestOverheadMs, base.Frontend.PromptTokenMs = 4, 0.02
	wl := workload(req(0, 50, 3), req(0, 20, 3), req(0, 90, 2), req(1, 10, 2))
	tests := []struct {
		mode string
		set  func(*Config)
	}{
		{FrontendUnbounded, func(*Config) {}},
		{FrontendHandlers, func(c *Config) { c.Frontend.Concurrency = 1 }},
		{FrontendEventLoop, func(c *Config) { c.Frontend.CPUShare = 0.5 }},
		{FrontendHoldForSlot, func(c *Config) {
			c.Engine.Type, c.Engine.LlamaCpp.Parallel, c.Frontend.HoldForSlot = "llamacpp", 2, true
		}},
	}
	byMode := map[string][]float64{}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			implied := base
			tc.set(&implied)
			assert.Equal(t, tc.mode, implied.Frontend.Discipline())
			explicit := implied
			explicit.Frontend.Mode = tc.mode
			a, _ := runAll(t, implied, wl)
			b, _ := runAll(t, explicit, wl)
			assert.Equal(t, a, b)
			for _, r := range a {
				byMode[tc.mode] = append(byMode[tc.mode], stampsMs(r)[0])
			}
		})
	}
	assert.NotEqual(t, byMode[FrontendUnbounded], byMode[FrontendHandlers], "the handlers queue the burst")
	assert.NotEqual(t, byMode[FrontendUnbounded], byMode[FrontendEventLoop], "the loop shares its CPU")
}

func TestFrontendModeRefusesContradictions(t *testing.T) {
	tests := []struct {
		set  func(*Config)
		want string
	}{
		{func(c *Config) { c.Frontend.Mode = "threads" }, `frontend.mode: must be one of unbounded, handlers, event_loop, hold_for_slot, got "threads"`},
		{func(c *Config) { c.Frontend.Mode, c.Frontend.CPUShare = FrontendHandlers, 0.5 }, "frontend.cpu_share: the event loop's share; frontend.mode is handlers, want event_loop"},
		{func(c *Config) { c.Frontend.Mode = FrontendEventLoop }, "frontend.mode: event_loop needs frontend.cpu_share > 0"},
		{func(c *Config) { c.Frontend.Mode, c.Frontend.HoldForSlot = FrontendUnbounded, true }, "frontend.hold_for_slot: the gate; frontend.mode is unbounded, want hold_for_slot"},
		{func(c *Config) { c.Frontend.Mode = FrontendHandlers }, "frontend.mode: handlers needs frontend.concurrency >= 1"},
		{func(c *Config) { c.Frontend.Mode, c.Frontend.Concurrency = FrontendUnbounded, 2 }, "frontend.concurrency: 2 handlers; frontend.mode is unbounded, want handlers"},
		{func(c *Config) { c.Frontend.Mode = FrontendHoldForSlot }, `frontend.hold_for_slot: holds requests for engine.llamacpp.parallel slots; engine.type is "vllm", want llamacpp`},
	}
	for i, tc := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			cfg := DefaultConfig()
			tc.set(&cfg)
			assert.EqualError(t, cfg.Validate(), tc.want)
		})
	}
}
