// Package timing is the simulator's step-time models and the hardware
// they price, a leaf that imports nothing of simbench's. A Clock (NewClock)
// turns one engine step's StepShape into nanoseconds by one of the models
// TimingModels names: DynoSim's polynomial (poly), the calibration's
// linear basis (linear), a roofline and the physics model (Physics: the
// step's FLOPs and bytes at the device's peaks), or a measured table.
//
// Reading guide: timing.go has the step's shape, the clock and the simple
// models; physics.go the FLOP and byte counts and the physics model;
// presets.go and device.go the GPU, CPU and model presets; hfconfig.go a
// Hugging Face config.json; config.go the timing: and hardware: sections
// and validate.go their checks; priors.go and gpupriors_gen.go the GPU
// priors (written by silicon's TestWritePriors).
//
// The step's random stretch (jitter, drift, stalls) draws on the
// simulator's seeded streams and stays in package sim.
package timing
