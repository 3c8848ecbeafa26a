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
