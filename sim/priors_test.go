package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHardwareWarnings(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(*Config)
		warned bool
	}{
		{"default", func(*Config) {}, false},
		{"poly", func(c *Config) { c.Timing.Model = "poly" }, true},
		{"linear", func(c *Config) { c.Timing.Model = "linear" }, true},
		{"table", func(c *Config) { c.Timing.Model = "table" }, true},
		{"roofline", func(c *Config) { c.Timing.Model = "roofline" }, false},
		{"calibrated linear", func(c *Config) { c.Timing.Model = "linear"; c.Calibration = &Calibration{} }, false},
	} {
		c := DefaultConfig()
		c.Hardware.GPU, c.Hardware.Model, c.Hardware.TensorParallel = "a100", "llama-3.1-70b", 4
		tc.edit(&c)
		w := c.HardwareWarnings()
		if !tc.warned {
			assert.Empty(t, w, tc.name)
			continue
		}
		if assert.Len(t, w, 1, tc.name) {
			assert.Contains(t, w[0], "timing.model "+c.Timing.Model+" ignores the hardware (gpu a100, model llama-3.1-70b, tensor_parallel 4)", tc.name)
		}
	}
}

// TestDefaultTimingSeesTheHardware: with no calibration, the default
// timing gives a 70B model on four A100s a different ITL than an 8B model
// on one; the hardware-blind poly gave both the same.
func TestDefaultTimingSeesTheHardware(t *testing.T) {
	step := func(gpu, model string, tp int) float64 {
		c := DefaultConfig()
		c.Hardware.GPU, c.Hardware.Model, c.Hardware.TensorParallel = gpu, model, tp
		clk, err := newTiming(&c)
		assert.NoError(t, err)
		return clk.model.stepMs(StepShape{DecodeSeqs: 8, DecodeContext: 8 * 1000, KVCapacity: 1 << 20})
	}
	small, big, h100 := step("a100", "llama-3.1-8b", 1), step("a100", "llama-3.1-70b", 4), step("h100", "llama-3.1-8b", 1)
	assert.Greater(t, big, 1.5*small, "70B on 4 A100s decodes slower than 8B on one")
	assert.Greater(t, small, 1.3*h100, "an A100 streams weights slower than an H100")
}
