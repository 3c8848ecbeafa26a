package timing

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDefaultTimingSeesTheHardware: with no calibration, the default
// timing gives a 70B model on four A100s a different ITL than an 8B model
// on one; the hardware-blind poly gave both the same.
func TestDefaultTimingSeesTheHardware(t *testing.T) {
	step := func(gpu, model string, tp int) float64 {
		c := defaultConfig()
		c.Hardware.GPU, c.Hardware.Model, c.Hardware.TensorParallel = gpu, model, tp
		clk, err := newTiming(&c)
		assert.NoError(t, err)
		return clk.model.stepMs(StepShape{DecodeSeqs: 8, DecodeContext: 8 * 1000, KVCapacity: 1 << 20})
	}
	small, big, h100 := step("a100", "llama-3.1-8b", 1), step("a100", "llama-3.1-70b", 4), step("h100", "llama-3.1-8b", 1)
	assert.Greater(t, big, 1.5*small, "70B on 4 A100s decodes slower than 8B on one")
	assert.Greater(t, small, 1.3*h100, "an A100 streams weights slower than an H100")
}

func TestModelPresetParams(t *testing.T) {
	// Published sizes: 8.03 B and 70.6 B parameters.
	m, err := lookupModel("llama-3.1-8b")
	require.NoError(t, err)
	assert.InDelta(t, 8.03e9, m.Params(), 0.01e9)
	m, err = lookupModel("Llama-3.1-70B")
	require.NoError(t, err)
	assert.InDelta(t, 70.6e9, m.Params(), 0.1e9)
	g, err := lookupGPU("H100_SXM")
	require.NoError(t, err)
	assert.Equal(t, 3350.0, g.MemBWGBs)
	for _, name := range []string{"h100", "h200", "b200", "gb200", "a100", "l40s", "rtx-6000-ada",
		"h100-sxm", "h100-pcie", "a100-40gb", "a100-80gb", "rtx-4090", "rtx-pro-6000", "RTX-PRO-6000-Blackwell"} {
		_, err := lookupGPU(name)
		assert.NoError(t, err, name)
	}
}
