package sim

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/simbench/simbench/sim/timing"
)

// DisaggregationConfig splits the workers into a prefill pool and a decode
// pool (Dynamo's disaggregated serving). Prefill workers compute prompts and
// hand their KV cache to decode workers, which generate every output token.
// PrefillWorkers 0 is aggregated serving: every worker does both.
type DisaggregationConfig struct {
	PrefillWorkers int `yaml:"prefill_workers" json:"prefill_workers"`
	DecodeWorkers  int `yaml:"decode_workers" json:"decode_workers"`
	// MaxLocalPrefillTokens is conditional disaggregation: a prompt whose
	// part not cached on its decode worker is at most this many tokens is
	// prefilled there; longer ones go to a prefill worker. 0: always remote.
	MaxLocalPrefillTokens int              `yaml:"max_local_prefill_tokens" json:"max_local_prefill_tokens"`
	KVTransfer            KVTransferConfig `yaml:"kv_transfer" json:"kv_transfer"`
	// Prefill and Decode override the top-level engine, hardware and timing
	// sections for one pool; a key not given keeps the top-level value.
	Prefill PoolOverride `yaml:"prefill" json:"prefill"`
	Decode  PoolOverride `yaml:"decode" json:"decode"`
}

// KVTransferConfig is how a prompt's KV cache moves from a prefill worker to
// a decode worker: latency_ms + bytes / bandwidth, where bytes are the
// prompt tokens the decode worker does not hold yet × layers × kv_heads ×
// head_dim × 2 (K and V) × dtype bytes of the model.
type KVTransferConfig struct {
	BandwidthGBs float64 `yaml:"bandwidth_gbs" json:"bandwidth_gbs"` // GB/s (1e9 bytes) of one transfer
	LatencyMs    float64 `yaml:"latency_ms" json:"latency_ms"`       // fixed cost of a transfer, before its bytes move
	// Contention makes every transfer share one link of bandwidth_gbs
	// fairly (processor sharing: n transfers moving bytes at once each get
	// bandwidth/n, recomputed whenever one starts or ends).
	Contention bool `yaml:"contention" json:"contention"`
}

// PoolOverride is one pool's own engine, hardware and timing (nil: the
// top-level section). ParseConfig resolves each given section over the
// top-level one, so a resolved override is a whole section.
type PoolOverride struct {
	Engine   *EngineConfig   `yaml:"engine,omitempty" json:"engine,omitempty"`
	Hardware *HardwareConfig `yaml:"hardware,omitempty" json:"hardware,omitempty"`
	Timing   *TimingConfig   `yaml:"timing,omitempty" json:"timing,omitempty"`
}

// DefaultDisaggregation is the section's defaults: aggregated serving (no
// prefill workers) and a 25 GB/s, 50 µs transfer (one RDMA NIC).
func DefaultDisaggregation() *DisaggregationConfig {
	return &DisaggregationConfig{KVTransfer: KVTransferConfig{BandwidthGBs: 25, LatencyMs: 0.05}}
}

// Disaggregated reports whether the workers are split into pools.
func (c Config) Disaggregated() bool {
	return c.Disaggregation != nil && c.Disaggregation.PrefillWorkers > 0
}

// Pool roles, as worker names, records and metric labels spell them.
const (
	RolePrefill = "prefill"
	RoleDecode  = "decode"
)

// PoolConfig is the configuration the workers of one pool run: the
// top-level configuration with the pool's overrides.
func (c Config) PoolConfig(role string) Config {
	if c.Disaggregation == nil {
		return c
	}
	o := c.Disaggregation.Decode
	if role == RolePrefill {
		o = c.Disaggregation.Prefill
	}
	if o.Engine != nil {
		c.Engine = *o.Engine
	}
	if o.Hardware != nil {
		c.Hardware = *o.Hardware
	}
	if o.Timing != nil {
		c.Timing = *o.Timing
	}
	return c
}

// Upper bounds of the transfer figures (typos, not deployments).
const (
	maxTransferGBs = 1e6 // 1 PB/s
	maxTransferMs  = 1e6
)

func (c Config) validateDisaggregation() error {
	if c.Disaggregation == nil {
		return nil
	}
	d := *c.Disaggregation
	if err := timing.FirstErr(timing.InRange("disaggregation.prefill_workers", d.PrefillWorkers, 0, maxWorkers),
		timing.InRange("disaggregation.decode_workers", d.DecodeWorkers, 0, maxWorkers),
		timing.InRange("disaggregation.max_local_prefill_tokens", d.MaxLocalPrefillTokens, 0, maxContextTokens)); err != nil {
		return err
	}
	if !c.Disaggregated() {
		if d.DecodeWorkers > 0 {
			return fmt.Errorf("disaggregation.decode_workers: %d decode workers need prefill_workers >= 1 (0 is aggregated serving)", d.DecodeWorkers)
		}
		return nil
	}
	if d.DecodeWorkers < 1 {
		return fmt.Errorf("disaggregation.decode_workers: must be >= 1 with prefill_workers %d, got %d", d.PrefillWorkers, d.DecodeWorkers)
	}
	if c.Workers != d.PrefillWorkers+d.DecodeWorkers {
		return fmt.Errorf("workers: %d, but disaggregation.prefill_workers %d + decode_workers %d = %d; give workers as their sum or leave it out",
			c.Workers, d.PrefillWorkers, d.DecodeWorkers, d.PrefillWorkers+d.DecodeWorkers)
	}
	t := d.KVTransfer
	if err := timing.FirstErr(timing.FiniteIn("disaggregation.kv_transfer.bandwidth_gbs", t.BandwidthGBs, 1e-6, maxTransferGBs),
		timing.FiniteIn("disaggregation.kv_transfer.latency_ms", t.LatencyMs, 0, maxTransferMs)); err != nil {
		return err
	}
	return c.validatePools()
}

// validatePools checks each pool's resolved engine, hardware and timing, and
// what the handoff needs of them.
func (c Config) validatePools() error {
	bs := 0
	for _, role := range []string{RolePrefill, RoleDecode} {
		p := c.PoolConfig(role)
		key := "disaggregation." + role
		for _, check := range []func() error{p.Engine.validate, p.Timing.Validate, p.Hardware.Validate, p.validateSpec} {
			if err := check(); err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
		}
		if p.Engine.Type == "llamacpp" {
			return fmt.Errorf("%s.engine.type: llamacpp has no KV transfer; disaggregated pools run vllm or sglang", key)
		}
		if bs != 0 && p.Engine.BlockSize != bs {
			return fmt.Errorf("disaggregation.decode.engine.block_size: %d, but the prefill pool's is %d (KV moves block by block)", p.Engine.BlockSize, bs)
		}
		bs = p.Engine.BlockSize
		if _, err := p.KVBlocks(); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		if _, err := p.Hardware.ResolveModel(); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
	}
	return nil
}

// resolvePools decodes each pool's engine, hardware and timing sections of
// the YAML document root over the top-level sections of cfg (already
// decoded), so an override names only what differs.
func resolvePools(root *yaml.Node, cfg *Config) error {
	d := mappingValue(root, "disaggregation")
	if d == nil || cfg.Disaggregation == nil {
		return nil
	}
	for _, role := range []string{RolePrefill, RoleDecode} {
		pool := mappingValue(d, role)
		o := &cfg.Disaggregation.Decode
		if role == RolePrefill {
			o = &cfg.Disaggregation.Prefill
		}
		var err error
		eng := cfg.Engine
		eng.SpeculativeConfig = eng.SpeculativeConfig.clone() // decoded over, not shared with the top level
		if o.Engine, err = override(pool, "engine", eng); err != nil {
			return err
		}
		if o.Hardware, err = override(pool, "hardware", cfg.Hardware); err != nil {
			return err
		}
		if o.Timing, err = override(pool, "timing", cfg.Timing); err != nil {
			return err
		}
	}
	return nil
}

// override is the pool's section key decoded over the top-level section
// top (keeping the fields it does not name; checkKeys has refused unknown
// keys already), or nil when the pool does not give the section.
func override[T any](pool *yaml.Node, key string, top T) (*T, error) {
	n := mappingValue(pool, key)
	if n == nil {
		return nil, nil
	}
	if err := n.Decode(&top); err != nil {
		return nil, err
	}
	return &top, nil
}

// mappingValue is the value of key in the mapping n, or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
