package sim

import (
	"math"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// heard is what a Listener heard of one request.
type heard struct {
	tokens []int64
	rec    *results.Record
}

func (h *heard) Token(atNs int64)         { h.tokens = append(h.tokens, atNs) }
func (h *heard) Done(rec *results.Record) { h.rec = rec }

// onlineAll submits wl's requests to an Online simulator at their
// timestamps, the clock advanced in steps of tick ns in between (a server's
// wake-ups), and runs it dry.
func onlineAll(t *testing.T, cfg Config, wl *traces.Workload, tick int64) []*heard {
	t.Helper()
	o, err := NewOnline(cfg)
	require.NoError(t, err)
	out := make([]*heard, len(wl.Requests))
	for i, r := range wl.Requests {
		at := int64(math.Round(r.TimestampMs * float64(ms)))
		for next := o.Now() + tick; next < at; next += tick {
			require.NoError(t, o.AdvanceTo(next))
		}
		out[i] = &heard{}
		idx, err := o.Submit(at, r, out[i])
		require.NoError(t, err)
		require.Equal(t, i, idx)
	}
	for {
		next, ok := o.Next()
		if !ok {
			break
		}
		require.NoError(t, o.AdvanceTo(next))
	}
	return out
}

// TestOnlineMatchesRun: requests submitted at their send times, the clock
// advanced at any pace, give the records Run gives, and each token is heard
// when the engine emits it at the time the record stamps.
func TestOnlineMatchesRun(t *testing.T) {
	t.Parallel()
	overhead := constCfg("vllm", 8, 0.05)
	overhead.Frontend.RequestOverheadMs = 3
	overhead.Frontend.ResponseOverheadMs = 1.5
	two := DefaultConfig()
	two.Workers = 2
	tests := []struct {
		name string
		cfg  Config
		tick int64
	}{
		{"vllm linear", constCfg("vllm", 10, 0.1), 7 * ms},
		{"sglang linear", constCfg("sglang", 10, 0.1), ms / 3},
		{"frontend overheads", overhead, 50 * ms},
		{"default two workers", two, ms / 10},
	}
	wl := workload(req(0, 100, 5), req(0, 40, 3), req(5, 300, 8), req(5, 20, 0),
		req(12.5, 64, 4), req(40, 10, 1), req(40, 500, 6), req(41, 30, 2))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want, _ := runAll(t, tt.cfg, wl)
			got := onlineAll(t, tt.cfg, wl, tt.tick)
			for i, h := range got {
				require.NotNil(t, h.rec, "request %d never finished", i)
				require.Equal(t, want[i], h.rec, "request %d", i)
				var stamps []int64
				for _, c := range h.rec.Chunks {
					stamps = append(stamps, c.AtNs-Epoch)
				}
				require.Equal(t, stamps, h.tokens, "request %d", i)
			}
		})
	}
}

func TestOnlineSubmitRejects(t *testing.T) {
	t.Parallel()
	o, err := NewOnline(constCfg("vllm", 10, 0))
	require.NoError(t, err)
	_, err = o.Submit(0, traces.Request{OutputLength: 3}, &heard{})
	require.EqualError(t, err, "sim: request without a prompt length (input_length 0)")
	_, err = o.Submit(0, req(0, 3, 3), nil)
	require.EqualError(t, err, "sim: Submit without a listener")
}

// TestOnlineMetrics: an online simulator's gathered families are Run's
// (frontend and engines), moving with the requests served, each worker's
// series labelled with its name; without server_metrics none.
func TestOnlineMetrics(t *testing.T) {
	t.Parallel()
	cfg := constCfg("vllm", 10, 0.1)
	cfg.Workers = 2
	cfg.Router.Policy = "round_robin"
	wl := workload(req(0, 100, 5), req(0, 40, 3), req(5, 300, 8), req(12.5, 64, 4))
	o, err := NewOnline(cfg)
	require.NoError(t, err)
	count := func(name string, labels map[string]string) float64 {
		mfs, err := o.Metrics()
		require.NoError(t, err)
		require.True(t, slices.IsSortedFunc(mfs, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) }))
		sum := 0.0
		for _, mf := range mfs {
			if mf.GetName() != name {
				continue
			}
			for _, m := range mf.Metric {
				if !hasLabels(m, labels) {
					continue
				}
				sum += m.GetCounter().GetValue() + float64(m.GetHistogram().GetSampleCount()) + m.GetGauge().GetValue()
			}
		}
		return sum
	}
	assert.Zero(t, count("dynamo_frontend_requests_total", nil))
	for _, r := range wl.Requests {
		_, err := o.Submit(int64(r.TimestampMs*float64(ms)), r, &heard{})
		require.NoError(t, err)
	}
	assert.Equal(t, 4.0, count("dynamo_frontend_inflight_requests", nil))
	for next, ok := o.Next(); ok; next, ok = o.Next() {
		require.NoError(t, o.AdvanceTo(next))
	}
	assert.Equal(t, 4.0, count("dynamo_frontend_requests_total", map[string]string{"status": "success"}))
	assert.Zero(t, count("dynamo_frontend_inflight_requests", nil))
	assert.Equal(t, 4.0, count("dynamo_frontend_ttft_stage_seconds", map[string]string{"stage": "backend"}))
	assert.Equal(t, 20.0, count("vllm:generation_tokens_total", nil))
	assert.Equal(t, 5.0+8, count("vllm:generation_tokens_total", map[string]string{"worker": WorkerNames(cfg)[0]}))
	assert.Equal(t, 2.0, count("vllm:e2e_request_latency_seconds", map[string]string{"worker": WorkerNames(cfg)[1]}))

	cfg.ServerMetrics.Enabled = false
	off, err := NewOnline(cfg)
	require.NoError(t, err)
	mfs, err := off.Metrics()
	require.NoError(t, err)
	assert.Nil(t, mfs)
}

// hasLabels says whether m carries every label of want.
func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.Label {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			n++
		}
	}
	return n == len(want)
}
