package timing

// testConfig is the part of sim's configuration the timing models read,
// as sim's DefaultConfig sets it (the GPU prior applied).
type testConfig struct {
	Timing   TimingConfig
	Hardware HardwareConfig
}

func defaultConfig() testConfig {
	c := testConfig{Timing: DefaultTimingConfig(), Hardware: DefaultHardwareConfig()}
	DefaultGPUPrior().ApplyTiming(&c.Timing)
	return c
}

// Validate checks the timing and hardware keys.
func (c testConfig) Validate() error { return FirstErr(c.Timing.Validate(), c.Hardware.Validate()) }

// newTiming builds c's clock for an engine that reads each sequence's own
// KV (vLLM's view, the default engine's).
func newTiming(c *testConfig) (Clock, error) { return NewClock(c.Timing, c.Hardware, KVView{}) }
