package timing

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// CPUSpec is a CPU serving a model (llama.cpp, Ollama): the cores the engine
// uses, the FLOPs one core retires per cycle in the engine's arithmetic
// (fp32 FMA on AVX2: 2 units × 8 lanes × 2 = 32), the clock, and the
// memory bandwidth and size the engine sees.
type CPUSpec struct {
	Cores int `yaml:"cores" json:"cores"`
	// Threads is how many of the cores the engine computes on (llama.cpp's
	// -t, Ollama's num_thread); 0 = all of them. The peak FLOP/s counts
	// these; the frontend's concurrency counts the cores.
	Threads       int     `yaml:"threads,omitempty" json:"threads,omitempty"`
	FLOPsPerCycle float64 `yaml:"flops_per_cycle" json:"flops_per_cycle"` // per core
	ClockGHz      float64 `yaml:"clock_ghz" json:"clock_ghz"`
	MemBWGBs      float64 `yaml:"mem_bw_gbs" json:"mem_bw_gbs"`
	MemGB         float64 `yaml:"mem_gb" json:"mem_gb"`
}

// cpuPresets are CPU classes. x86-64-v3-2vcpu is a 2-vCPU cloud share of an
// AVX2/FMA Xeon at 2.3 GHz (the machines simbench's CI runs the CPU engine
// on); its bandwidth is what one such share streams, not the socket's.
var cpuPresets = map[string]CPUSpec{
	"x86-64-v3-2vcpu": {Cores: 2, FLOPsPerCycle: 32, ClockGHz: 2.3, MemBWGBs: 25, MemGB: 24},
	"x86-64-v4-8vcpu": {Cores: 8, FLOPsPerCycle: 64, ClockGHz: 2.6, MemBWGBs: 60, MemGB: 32},
	"apple-m2":        {Cores: 8, FLOPsPerCycle: 32, ClockGHz: 3.5, MemBWGBs: 100, MemGB: 16},
}

// CPUPresets returns the names of the CPU presets, sorted.
func CPUPresets() []string { return sortedKeys(cpuPresets) }

func (c CPUSpec) validate(key string) error {
	if c.Cores <= 0 {
		return fmt.Errorf("%s.cores: must be > 0, got %d", key, c.Cores)
	}
	if c.Threads < 0 || c.Threads > c.Cores {
		return fmt.Errorf("%s.threads: must be in [0, cores %d], got %d", key, c.Cores, c.Threads)
	}
	fields := []struct {
		name string
		v    float64
	}{{"flops_per_cycle", c.FLOPsPerCycle}, {"clock_ghz", c.ClockGHz}, {"mem_bw_gbs", c.MemBWGBs}, {"mem_gb", c.MemGB}}
	for _, f := range fields {
		if !(f.v > 0) || f.v > 1e9 {
			return fmt.Errorf("%s.%s: must be > 0, got %g", key, f.name, f.v)
		}
	}
	return nil
}

// ComputeCores is the cores the engine computes on: Threads, else all.
func (c CPUSpec) ComputeCores() int {
	if c.Threads > 0 {
		return c.Threads
	}
	return c.Cores
}

// Device is what the timing and KV models need of a GPU or a CPU.
type Device struct {
	GPUSpec
	CPU bool // a CPU engine: the peak is the same for every dtype
}

// peakFLOPS is the dense peak of the device for dtype: a GPU's tensor rate
// (×2 for fp8 where supported, ÷2 for fp32's tf32), a CPU's cores × FLOPs
// per cycle × clock whatever the dtype (CPU engines compute in fp32).
func (d Device) peakFLOPS(dtype string) float64 {
	peak := d.PeakTFLOPS * 1e12
	if d.CPU {
		return peak
	}
	if dtype == "fp8" && d.FP8Supported {
		peak *= 2
	} else if dtype == "fp32" {
		peak /= 2
	}
	return peak
}

// ResolveDevice is the hardware a worker runs on: hardware.cpu when set (the GPU
// keys are then ignored), else hardware.gpu.
func (h HardwareConfig) ResolveDevice() (Device, error) {
	if h.CPU == "" {
		g, err := h.gpu()
		return Device{GPUSpec: g}, err
	}
	c, err := h.ResolveCPU()
	if err != nil {
		return Device{}, err
	}
	return Device{CPU: true, GPUSpec: GPUSpec{PeakTFLOPS: float64(c.ComputeCores()) * c.FLOPsPerCycle * c.ClockGHz / 1e3,
		MemBWGBs: c.MemBWGBs, MemGB: c.MemGB, LinkBWGBs: c.MemBWGBs}}, nil
}

// ResolveCPU is the CPU spec hardware.cpu names (a preset or the custom
// one, validated).
func (h HardwareConfig) ResolveCPU() (CPUSpec, error) {
	if h.CPU == "custom" {
		if h.CustomCPU == nil {
			return CPUSpec{}, errors.New("hardware.custom_cpu: required with hardware.cpu custom")
		}
		return *h.CustomCPU, h.CustomCPU.validate("hardware.custom_cpu")
	}
	if c, ok := cpuPresets[strings.ToLower(h.CPU)]; ok {
		return c, nil
	}
	return CPUSpec{}, fmt.Errorf("hardware.cpu: unknown CPU %q (known: %s, or \"custom\" with hardware.custom_cpu)",
		h.CPU, strings.Join(CPUPresets(), ", "))
}

// ModelFromGGUF reads a dense transformer's shape from GGUF metadata keys
// ("general.architecture" = arch, then arch.block_count,
// arch.embedding_length, arch.feed_forward_length,
// arch.attention.head_count, arch.attention.head_count_kv,
// arch.attention.key_length and arch.vocab_size), as llama.cpp and
// Ollama's /api/show report them. get returns a key's numeric value; arch
// is the architecture name. vocab falls back to the caller's count of
// tokenizer tokens when the key is absent (pass it as vocab).
func ModelFromGGUF(arch string, get func(key string) (float64, bool), vocab int) (ModelSpec, error) {
	num := func(k string) int {
		v, _ := get(arch + "." + k)
		return int(v)
	}
	m := ModelSpec{Layers: num("block_count"), Hidden: num("embedding_length"), Intermediate: num("feed_forward_length"),
		Heads: num("attention.head_count"), KVHeads: num("attention.head_count_kv"), Vocab: num("vocab_size")}
	if m.KVHeads == 0 {
		m.KVHeads = m.Heads
	}
	if m.Vocab == 0 {
		m.Vocab = vocab
	}
	if kl := num("attention.key_length"); m.Heads > 0 && kl > 0 && kl != m.Hidden/m.Heads {
		m.HeadDim = kl
	}
	if err := m.validate(arch); err != nil {
		return ModelSpec{}, fmt.Errorf("GGUF metadata: %w", err)
	}
	return m, nil
}

// LocalCPU describes the CPU this process runs on: its logical cores, the
// FLOPs per cycle its vector units give (AVX-512: 64, AVX2 with FMA: 32,
// else 16) and its clock from /proc/cpuinfo where there is one; the
// memory bandwidth is the x86-64-v3-2vcpu preset's, for the fit to correct.
func LocalCPU() CPUSpec {
	c := cpuPresets["x86-64-v3-2vcpu"]
	c.Cores = runtime.NumCPU()
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return c
	}
	info := string(b)
	switch {
	case strings.Contains(info, " avx512f"):
		c.FLOPsPerCycle = 64
	case strings.Contains(info, " avx2") && strings.Contains(info, " fma"):
		c.FLOPsPerCycle = 32
	default:
		c.FLOPsPerCycle = 16
	}
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == "cpu MHz" {
			if mhz, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && mhz > 0 {
				c.ClockGHz = mhz / 1e3
			}
			break
		}
	}
	return c
}
