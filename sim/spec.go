package sim

import (
	"fmt"
	"math/rand/v2"

	"go.yaml.in/yaml/v3"

	"github.com/simbench/simbench/sim/timing"
)

// SpeculativeConfig is speculative decoding on a vllm worker, as vLLM's
// speculative_config sets it: every decoding sequence drafts
// num_speculative_tokens tokens, the target model verifies them with the
// sequence's own next token in one step, and the sequence emits the
// accepted prefix of the drafts plus one token of the target's. The
// drafter's cost depends on the method:
//
//   - eagle, eagle3, mtp: a head of one decoder layer of the target's
//     shape, sharing its embedding and LM head, run once over the step's
//     prompt chunks (its own KV) and once per draft position over the
//     decoding sequences;
//   - draft_model: a model of its own (model, custom_model or
//     model_config), likewise one pass over the prompt chunks and one per
//     draft position; its weights and KV share the GPU memory;
//   - ngram: a lookup in the context on the CPU, no device time.
//
// The drafter's passes are priced by the pool's timing model (physics or
// roofline) on the drafter's shape, without the per-step and per-sequence
// overheads (the drafter runs inside the target's step).
type SpeculativeConfig struct {
	Method               string         `yaml:"method" json:"method"`
	NumSpeculativeTokens int            `yaml:"num_speculative_tokens" json:"num_speculative_tokens"`
	AcceptanceRate       AcceptanceRate `yaml:"acceptance_rate,omitempty" json:"acceptance_rate,omitempty"`
	Model                string         `yaml:"model,omitempty" json:"model,omitempty"`
	CustomModel          *ModelSpec     `yaml:"custom_model,omitempty" json:"custom_model,omitempty"`
	ModelConfig          string         `yaml:"model_config,omitempty" json:"model_config,omitempty"`
}

// AcceptanceRate is the conditional probability that a draft position is
// accepted given that every position before it was: one number for every
// position, or one per position (num_speculative_tokens of them). YAML
// takes a number or a list.
type AcceptanceRate []float64

// UnmarshalYAML takes a number as a list of one.
func (a *AcceptanceRate) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		var v float64
		if err := n.Decode(&v); err != nil {
			return err
		}
		*a = AcceptanceRate{v}
		return nil
	}
	var vs []float64
	if err := n.Decode(&vs); err != nil {
		return err
	}
	*a = vs
	return nil
}

// The speculative decoding methods (SpeculativeConfig.Method).
const (
	SpecEagle      = "eagle"
	SpecEagle3     = "eagle3"
	SpecMTP        = "mtp"
	SpecNgram      = "ngram"
	SpecDraftModel = "draft_model"
)

// SpecMethods lists the methods in the order the docs give them.
func SpecMethods() []string {
	return []string{SpecEagle, SpecEagle3, SpecMTP, SpecNgram, SpecDraftModel}
}

// defaultAcceptance is each method's per-position acceptance when
// acceptance_rate is not given, from published figures (docs/speculative.md
// cites them): chain drafting on chat benchmarks.
var defaultAcceptance = map[string]float64{
	SpecEagle:      0.80, // EAGLE (ICML 2024): about 0.8 per draft token on MT-bench
	SpecEagle3:     0.65, // EAGLE3-LLaMA3.1-Instruct-8B: mean acceptance length 2.77 at K = 7 on MT-bench
	SpecMTP:        0.85, // DeepSeek-V3 report §5.4.3: the second token is accepted 85–90 % of the time
	SpecNgram:      0.60, // the EAGLE paper's figure for n-gram and Medusa drafts: about 0.6
	SpecDraftModel: 0.70, // no single published figure: set it for the pair you run
}

// maxSpecTokens bounds num_speculative_tokens (vLLM's EAGLE runs up to
// about 10; beyond 16 the acceptance of the last positions is nil).
const maxSpecTokens = 16

// clone is a copy that shares nothing with s (a pool's override is
// decoded over it).
func (s *SpeculativeConfig) clone() *SpeculativeConfig {
	if s == nil {
		return nil
	}
	c := *s
	c.AcceptanceRate = append(AcceptanceRate(nil), s.AcceptanceRate...)
	if s.CustomModel != nil {
		m := *s.CustomModel
		c.CustomModel = &m
	}
	return &c
}

// Rates is the acceptance of each of the k positions (the method's
// default where acceptance_rate is not given).
func (s *SpeculativeConfig) Rates() []float64 {
	out := make([]float64, s.NumSpeculativeTokens)
	for i := range out {
		switch len(s.AcceptanceRate) {
		case 0:
			out[i] = defaultAcceptance[s.Method]
		case 1:
			out[i] = s.AcceptanceRate[0]
		default:
			out[i] = s.AcceptanceRate[i]
		}
	}
	return out
}

// validateSpec checks engine.speculative_config against the engine,
// timing and hardware that run it.
func (c Config) validateSpec() error {
	s := c.Engine.SpeculativeConfig
	if s == nil {
		return nil
	}
	const key = "engine.speculative_config"
	if err := timing.FirstErr(timing.OneOf(key+".method", s.Method, SpecMethods()...),
		timing.InRange(key+".num_speculative_tokens", s.NumSpeculativeTokens, 1, maxSpecTokens)); err != nil {
		return err
	}
	if n := len(s.AcceptanceRate); n > 1 && n != s.NumSpeculativeTokens {
		return fmt.Errorf("%s.acceptance_rate: %d rates, want one or num_speculative_tokens (%d)", key, n, s.NumSpeculativeTokens)
	}
	for i, a := range s.AcceptanceRate {
		if err := timing.FiniteIn(fmt.Sprintf("%s.acceptance_rate[%d]", key, i), a, 0, 1); err != nil {
			return err
		}
	}
	switch {
	case c.Engine.Type != "vllm":
		return fmt.Errorf("%s: modelled on vllm's scheduler; engine.type is %q", key, c.Engine.Type)
	case c.Timing.Model != "physics" && c.Timing.Model != "roofline":
		return fmt.Errorf("%s: the drafter and the verification are priced from FLOPs and bytes; timing.model is %q, want physics or roofline", key, c.Timing.Model)
	}
	if err := s.validateDrafter(key); err != nil {
		return err
	}
	_, err := drafter(c.Hardware, s)
	return err
}

// validateDrafter: only draft_model names a model of its own.
func (s *SpeculativeConfig) validateDrafter(key string) error {
	named := s.Model != "" || s.CustomModel != nil || s.ModelConfig != ""
	switch {
	case s.Method == SpecDraftModel && !named:
		return fmt.Errorf("%s.model: draft_model needs the drafter: a preset in model, model custom with custom_model, or model_config", key)
	case s.Method != SpecDraftModel && named:
		return fmt.Errorf("%s.model: only draft_model has a model of its own; %s drafts with %s", key, s.Method, drafterOf(s.Method))
	}
	return nil
}

func drafterOf(method string) string {
	if method == SpecNgram {
		return "a lookup in the context"
	}
	return "one layer of the target's shape"
}

// drafter is the model that drafts for s on h (ok false for ngram, which
// has none): a draft model's own, or one layer of the target's shape
// sharing its embedding and LM head.
func drafter(h HardwareConfig, s *SpeculativeConfig) (m ModelSpec, err error) {
	const key = "engine.speculative_config"
	switch s.Method {
	case SpecNgram:
		return ModelSpec{}, nil
	case SpecDraftModel:
		d := HardwareConfig{Model: s.Model, CustomModel: s.CustomModel, ModelConfig: s.ModelConfig, WeightDType: h.WeightDType}
		if d.CustomModel != nil && d.Model == "" {
			d.Model = "custom"
		}
		if m, err = d.ResolveModel(); err != nil {
			return m, fmt.Errorf("%s (the draft model's model, custom_model, model_config): %w", key, err)
		}
		return m, nil
	}
	if m, err = h.ResolveModel(); err != nil {
		return m, err
	}
	m.Layers, m.MoELayers, m.TiedEmbed = 1, 0, true
	return m, nil
}

// drafterMemory is what the drafter adds to a worker's GPU memory: its
// weights and its KV bytes per token (0, 0 without a drafter).
func (c Config) drafterMemory() (weights, kvPerToken float64, err error) {
	s := c.Engine.SpeculativeConfig
	if s == nil || s.Method == SpecNgram {
		return 0, 0, nil
	}
	m, err := drafter(c.Hardware, s)
	if err != nil {
		return 0, 0, err
	}
	weights = c.Hardware.WeightMemBytes(m)
	if s.Method != SpecDraftModel { // the head shares the target's embedding and LM head
		weights = c.Hardware.LayerWeightBytes(m)
	}
	return weights, c.Hardware.KVBytesPerToken(m), nil
}

// speculator is one pool's speculative decoding: the rates and the
// drafter's timing (nil clock for ngram).
type speculator struct {
	k     int
	rates []float64
	draft *clock
}

// newSpeculator builds cfg's speculator, nil when speculative decoding
// is off.
func newSpeculator(cfg Config) (*speculator, error) {
	s := cfg.Engine.SpeculativeConfig
	if s == nil {
		return nil, nil
	}
	sp := &speculator{k: s.NumSpeculativeTokens, rates: s.Rates()}
	if s.Method == SpecNgram {
		return sp, nil
	}
	m, err := drafter(cfg.Hardware, s)
	if err != nil {
		return nil, err
	}
	d := cfg
	d.Hardware.Model, d.Hardware.CustomModel, d.Hardware.ModelConfig = "custom", &m, ""
	p := &d.Timing.Physics
	p.StepOverheadMs, p.SeqOverheadMs, p.MultiTokenOverheadMs, p.PrefillOverheadMs = 0, 0, 0, 0
	d.Timing.Roofline.StepOverheadMs = 0
	c, err := newTiming(&d)
	if err != nil {
		return nil, fmt.Errorf("engine.speculative_config: the drafter's timing: %w", err)
	}
	sp.draft = &c
	return sp, nil
}

// draftNs is the drafter's time in a step of shape s whose decoding
// sequences draft up to passes tokens: one pass over the prompt chunks
// and one per draft position over the drafting sequences (drafters, with
// drafterCtx context tokens in all).
func (sp *speculator) draftNs(s StepShape, drafters, drafterCtx int64, passes int) int64 {
	if sp == nil || sp.draft == nil {
		return 0
	}
	var ns int64
	if s.PrefillTokens > 0 {
		ns += sp.draft.StepNs(StepShape{PrefillTokens: s.PrefillTokens, PrefillSeqs: s.PrefillSeqs,
			PrefillPrefix: s.PrefillPrefix, PrefillAttn: s.PrefillAttn, KVCapacity: s.KVCapacity, MaxContext: s.MaxContext})
	}
	if drafters > 0 {
		for j := range int64(passes) {
			ns += sp.draft.StepNs(StepShape{DecodeSeqs: drafters, DecodeContext: drafterCtx + j*drafters,
				KVCapacity: s.KVCapacity, MaxContext: s.MaxContext})
		}
	}
	return ns
}

// accept draws how many of d drafts are accepted: positions in order,
// each with its rate, until the first rejection.
func (sp *speculator) accept(rng *rand.Rand, d int) int {
	for i := range d {
		if a := sp.rates[i]; a < 1 && (a <= 0 || rng.Float64() >= a) {
			return i
		}
	}
	return d
}

// newSpecRNG is a worker's stream of acceptance draws: a PCG of its own
// (seed, a constant, the worker), so that no other stream shifts.
func newSpecRNG(seed int64, worker int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), 0x5bec_dec0+uint64(worker)))
}

// specStats are a worker's speculative decoding counters, vLLM's
// spec_decode families.
type specStats struct {
	drafts, draftTokens, accepted int64
	perPos                        []int64 // accepted at each draft position
}

// ExpectedTokensPerStep is the mean tokens a decoding sequence emits per
// step with per-position acceptance rates: 1 + Σ_i Π_{j≤i} rates[j]
// ((1 − a^(k+1))/(1 − a) for one rate a).
func ExpectedTokensPerStep(rates []float64) float64 {
	sum, p := 1.0, 1.0
	for _, a := range rates {
		p *= a
		sum += p
	}
	return sum
}

// specRate is accepted/drafted, 0 when nothing was drafted.
func specRate(accepted, drafted int64) float64 {
	if drafted == 0 {
		return 0
	}
	return float64(accepted) / float64(drafted)
}
