package traces

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ptr[T any](v T) *T { return &v }

func TestSpecSynth(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec Spec
		mode string
		err  string
	}{
		{"closed loop", Spec{Concurrency: ptr(4)}, ModeConcurrency, ""},
		{"rate: poisson by default", Spec{RequestRate: ptr(2.0)}, ModePoisson, ""},
		{"rate and pattern", Spec{RequestRate: ptr(2.0), ArrivalPattern: ptr("gamma"), GammaShape: ptr(0.5)}, ModeGamma, ""},
		{"neither", Spec{}, "", "give --concurrency N"},
		{"pattern without rate", Spec{ArrivalPattern: ptr("constant"), Concurrency: ptr(1)}, "", "--arrival-pattern constant needs --request-rate"},
		{"gamma shape without gamma", Spec{RequestRate: ptr(1.0), GammaShape: ptr(2.0)}, "", "--gamma-shape only applies"},
		{"unknown pattern", Spec{RequestRate: ptr(1.0), ArrivalPattern: ptr("bursty")}, "", `got "bursty"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.spec.Synth()
			if tc.err != "" {
				var se *SpecError
				require.ErrorAs(t, err, &se)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.mode, s.Mode)
			assert.Equal(t, DefaultSynth.ISL, s.ISL, "unset keys keep the defaults")
		})
	}
}

func TestSpecBuildRefusesMixedKeys(t *testing.T) {
	_, _, err := Spec{Concurrency: ptr(1), Speedup: ptr(2.0), Limit: ptr(3)}.Build(0)
	assert.EqualError(t, err, "--speedup reshapes a trace: it needs --trace", "the first key in flag order")
	_, _, err = Spec{Trace: ptr("t.jsonl"), ISL: ptr(5)}.Build(0)
	assert.EqualError(t, err, "--isl shapes a synthetic workload: it cannot be used with --trace")
}

func TestSpecBuildFillsTheDuration(t *testing.T) {
	wl, _, err := Spec{RequestRate: ptr(4.0)}.Build(2.5)
	require.NoError(t, err)
	assert.Len(t, wl.Requests, 10, "ceil(4 req/s × 2.5 s)")
	wl, _, err = Spec{RequestRate: ptr(4.0), RequestCount: ptr(3)}.Build(2.5)
	require.NoError(t, err)
	assert.Len(t, wl.Requests, 3, "an explicit request_count wins")
}

func TestSpecKeys(t *testing.T) {
	assert.Equal(t, []string{"concurrency=2", "isl=7"}, Spec{ISL: ptr(7), Concurrency: ptr(2)}.Keys())
}

// TestSpecTraceAtItsBlockSize: a workload synthesised at 16 tokens a hash
// block, written as a trace, replays with --block-size 16; without it its
// hash_ids do not fit Mooncake's 512, and the error says where.
func TestSpecTraceAtItsBlockSize(t *testing.T) {
	wl, err := Synthesize(SynthSpec{Mode: ModePoisson, Rate: 2, RequestCount: 4, ISL: 592, OSL: 8, BlockSize: 16, Seed: 1})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "workload.jsonl")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, WriteJSONL(f, wl))
	require.NoError(t, f.Close())
	back, _, err := Spec{Trace: ptr(path), BlockSize: ptr(16)}.Build(0)
	require.NoError(t, err)
	assert.Equal(t, 16, back.BlockSize)
	assert.Equal(t, wl.Digest, back.Digest)
	_, _, err = Spec{Trace: ptr(path)}.Build(0)
	assert.ErrorContains(t, err, path+`:1: field "hash_ids": 37 block(s) do not fit input_length 592: at 512 tokens per block`)
}
