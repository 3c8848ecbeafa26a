package peerruns

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// fixedOSL is the output length every request of the run produced: the
// configured one when ignore_eos holds it; why says why there is none.
type fixedOSL struct {
	n   int
	why string
}

// stageLoad is how one stage sent its requests.
type stageLoad struct {
	index       int
	mode        string // traces.ModePoissonSpan, ModePoisson or ModeConcurrency; "" when not rebuilt
	why         string // why the load is not rebuilt
	rate        float64
	requests    int
	concurrency int  // closed loop: in flight; rate modes: the client's cap (0: none known)
	afterOthers bool // stages of the same report ran before it, on the same server
	osl         fixedOSL
	notes       []string
}

// stageLoad reads load.stages[i] and the client's concurrency. A
// configuration without load.stages (load.sweep, which picks its rates as
// it runs) takes stage i's rate and length from its load_summary ls.
func (c *ipConfig) stageLoad(i int, ls *ipLoadSummary) (stageLoad, error) {
	l := stageLoad{index: i, osl: c.fixedOSL()}
	switch {
	case c.path == "":
		l.why = fmt.Sprintf("no %s beside the report: the workload is not rebuilt", configName)
		return l, nil
	case len(c.Load.Stages) == 0:
		return c.sweptLoad(l, ls), nil
	case i >= len(c.Load.Stages):
		return l, c.errorf([]any{"load", "stages"}, "%d stage(s), but the report has stage %d", len(c.Load.Stages), i)
	}
	st, at := c.Load.Stages[i], []any{"load", "stages", i}
	switch c.Load.Type {
	case "", "constant", "poisson":
		if !(st.Rate > 0) || math.IsInf(st.Rate, 0) {
			return l, c.errorf(append(at, "rate"), "must be a finite number > 0, got %v", st.Rate)
		}
		if !(st.Duration > 0) || math.IsInf(st.Duration, 0) {
			return l, c.errorf(append(at, "duration"), "must be a finite number of seconds > 0, got %v", st.Duration)
		}
		l.setRate(c, st.Rate, int(math.Round(st.Rate*st.Duration)))
	case "concurrent":
		if st.NumRequests <= 0 {
			return l, c.errorf(append(at, "num_requests"), "must be > 0, got %d", st.NumRequests)
		}
		if st.ConcurrencyLevel <= 0 {
			return l, c.errorf(append(at, "concurrency_level"), "must be > 0, got %d", st.ConcurrencyLevel)
		}
		l.mode, l.requests, l.concurrency = traces.ModeConcurrency, st.NumRequests, st.ConcurrencyLevel
	default:
		l.why = fmt.Sprintf("load.type %s is not rebuilt (constant, poisson and concurrent are)", c.Load.Type)
	}
	return l, nil
}

// sweptLoad is the load of a stage that load.stages does not list: the
// rate its load_summary says was asked for, for as many requests as were
// sent.
func (c *ipConfig) sweptLoad(l stageLoad, ls *ipLoadSummary) stageLoad {
	switch {
	case c.Load.Type != "" && c.Load.Type != "constant" && c.Load.Type != "poisson":
		l.why = fmt.Sprintf("load.type %s is not rebuilt (constant, poisson and concurrent are)", c.Load.Type)
	case ls == nil || ls.RequestedRate == nil || !(*ls.RequestedRate > 0) || math.IsInf(*ls.RequestedRate, 0) || ls.Count == nil || *ls.Count <= 0:
		l.why = "load.stages is not in the configuration and the stage file's load_summary has no requested_rate and count: the workload is not rebuilt"
	default:
		l.setRate(c, *ls.RequestedRate, *ls.Count)
		what := "load.stages is not in the configuration"
		if c.Load.Sweep != nil {
			what = "load.sweep chose the stages' rates as it ran"
		}
		l.notes = append(l.notes, fmt.Sprintf("%s: stage %d is rebuilt from its load_summary, %d requests at %.6g requests/s", what, l.index, *ls.Count, *ls.RequestedRate))
	}
	return l
}

// setRate makes l an open-loop stage of n requests at rate: inference-perf's
// constant load type draws exponential gaps rescaled to the stage's
// duration (traces.ModePoissonSpan), its poisson type a Poisson count each
// second, spread over the second the same way (a Poisson process).
func (l *stageLoad) setRate(c *ipConfig, rate float64, n int) {
	l.mode, l.rate, l.requests = traces.ModePoissonSpan, rate, n
	if c.Load.Type == "poisson" {
		l.mode = traces.ModePoisson
	}
	l.concurrency = c.clientCap(l)
}

// clientCap is the most requests the client keeps in flight:
// num_workers × worker_max_concurrency.
func (c *ipConfig) clientCap(l *stageLoad) int {
	perWorker := firstInt(100, c.Load.WorkerMaxConcurrency)
	if c.Load.NumWorkers == nil {
		l.notes = append(l.notes, "load.num_workers is not set (inference-perf's default is the client's CPU count): the workload has no concurrency cap")
		return 0
	}
	return *c.Load.NumWorkers * perWorker
}

// fixedOSL is the configured output length when ignore_eos makes every
// request produce it.
func (c *ipConfig) fixedOSL() fixedOSL {
	if c.path == "" {
		return fixedOSL{why: fmt.Sprintf("no %s beside the report, so the output length is not known", configName)}
	}
	if c.Server.IgnoreEOS == nil || !*c.Server.IgnoreEOS {
		return fixedOSL{why: "server.ignore_eos is not true, so the output length is the model's, and inference-perf's count of it is not usable"}
	}
	switch c.Data.Type {
	case "shared_prefix":
		sp := c.Data.SharedPrefix
		if sp == nil || sp.OutputDistribution != nil || !isScalar(&sp.OutputLen) {
			return fixedOSL{why: "data.shared_prefix.output_len is not one fixed length"}
		}
		n, err := c.fixedLen(&sp.OutputLen, "output_len", 50)
		if err != nil {
			return fixedOSL{why: err.Error()}
		}
		return fixedOSL{n: n}
	case "random", "synthetic":
		if n, ok := c.Data.OutputDistribution.fixed(); ok {
			return fixedOSL{n: n}
		}
		return fixedOSL{why: "data.output_distribution is not one fixed length"}
	}
	return fixedOSL{why: fmt.Sprintf("data.type %s has no configured output length", c.Data.Type)}
}

// fixed is the distribution's only value, when it has one.
func (d *ipDistribution) fixed() (int, bool) {
	switch {
	case d == nil:
		return 0, false
	case d.Min != nil && d.Max != nil && *d.Min == *d.Max:
		return *d.Min, true
	case d.Mean != nil && (d.Type == "fixed" || d.StdDev != nil && *d.StdDev == 0):
		return int(math.Round(*d.Mean)), true
	}
	return 0, false
}

func isScalar(n *yaml.Node) bool {
	return n.Kind == 0 || n.Kind == yaml.ScalarNode
}

// rebuildWorkload rebuilds the stage's requests from the configuration;
// measuredISL is the stage's published prompt_len mean (0 if none).
func (r *Run) rebuildWorkload(cfg *ipConfig, load stageLoad, measuredISL float64) error {
	for _, n := range load.notes {
		r.note("%s", n)
	}
	if load.why != "" {
		r.NoWorkload = load.why
		return nil
	}
	var err error
	switch cfg.Data.Type {
	case "shared_prefix":
		err = r.sharedPrefixWorkload(cfg, load, measuredISL)
	case "random", "synthetic":
		err = r.randomWorkload(cfg, load, measuredISL)
	default:
		r.NoWorkload = fmt.Sprintf("data.type %s is not rebuilt (shared_prefix, random and synthetic are)", cfg.Data.Type)
	}
	if err != nil || r.Workload == nil {
		return err
	}
	r.Workload.Source = fmt.Sprintf("inference-perf %s stage %d: %s", cfg.path, load.index, r.Workload.Source)
	if load.mode != traces.ModeConcurrency {
		r.note("the workload's arrival times are a fresh draw of the stage's arrival process (%s at %g requests/s), not the ones the client drew", load.mode, load.rate)
	}
	return nil
}

// sharedPrefixWorkload rebuilds inference-perf's shared_prefix data: G
// groups of P prompts, each prompt a group's system prompt and a question
// of its own, request i sending prompt i mod G·P (so prompts repeat
// exactly, as they do there), at the stage's rate.
func (r *Run) sharedPrefixWorkload(cfg *ipConfig, load stageLoad, measuredISL float64) error {
	sp := cfg.Data.SharedPrefix
	if sp == nil {
		return cfg.errorf([]any{"data", "shared_prefix"}, "is missing for data.type shared_prefix")
	}
	if why := sp.notRebuilt(); why != "" {
		r.NoWorkload = why
		return nil
	}
	sys, err := cfg.fixedLen(&sp.SystemPromptLen, "system_prompt_len", 100)
	if err != nil {
		return err
	}
	question, err := cfg.fixedLen(&sp.QuestionLen, "question_len", 50)
	if err != nil {
		return err
	}
	osl, err := cfg.fixedLen(&sp.OutputLen, "output_len", 50)
	if err != nil {
		return err
	}
	groups := firstInt(10, sp.NumGroups, sp.NumUniqueSystemPrompts)
	perGroup := firstInt(10, sp.NumPromptsPerGroup, sp.NumUsersPerSystemPrompt)
	if groups <= 0 || perGroup <= 0 {
		return cfg.errorf([]any{"data", "shared_prefix"}, "num_groups (%d) and num_prompts_per_group (%d) must be > 0", groups, perGroup)
	}
	isl := r.promptLength(sys+question, measuredISL, fmt.Sprintf("system_prompt_len %d + question_len %d", sys, question))
	if isl <= sys {
		isl = sys + question
	}
	bs := sys
	if bs == 0 {
		bs = traces.MooncakeBlockSize
	}
	prompts := groups * perGroup
	spec := traces.SynthSpec{ISL: isl, OSL: osl, SharedPrefixTokens: sys, NumPrefixGroups: groups, BlockSize: bs,
		Seed: seedOf(sp.Seed, cfg.Load.BaseSeed)}
	if load.afterOthers {
		spec.WarmupCount = prompts
	}
	wl, err := synthesize(cfg, load, spec)
	if err != nil {
		return err
	}
	repeatPrompts(wl, prompts)
	wl.Source += fmt.Sprintf(" prompts=%d", prompts)
	r.Workload = wl
	r.note("request i sends prompt i mod %d (%d groups × %d prompts, groups round-robin); inference-perf cycles through the same prompts in a shuffled order", prompts, groups, perGroup)
	if load.afterOthers {
		r.note("stage %d starts with its %d prompts as a warmup phase: inference-perf lets each stage finish before the next begins, so the stages before it left the server idle, holding the same prompts in its prefix cache", load.index, prompts)
	}
	return nil
}

// notRebuilt says why a shared_prefix configuration is not rebuilt.
func (sp *ipSharedPrefix) notRebuilt() string {
	switch {
	case sp.EnableMultiTurnChat:
		return "data.shared_prefix.enable_multi_turn_chat is not rebuilt"
	case sp.QuestionDistribution != nil || sp.OutputDistribution != nil ||
		!isScalar(&sp.SystemPromptLen) || !isScalar(&sp.QuestionLen) || !isScalar(&sp.OutputLen):
		return "data.shared_prefix with length distributions is not rebuilt (fixed lengths are)"
	}
	return ""
}

// randomWorkload rebuilds random or synthetic data: prompts without shared
// prefixes, lengths from the configured normal distributions.
func (r *Run) randomWorkload(cfg *ipConfig, load stageLoad, measuredISL float64) error {
	in, out := cfg.Data.InputDistribution, cfg.Data.OutputDistribution
	for _, d := range []struct {
		name string
		d    *ipDistribution
	}{{"input_distribution", in}, {"output_distribution", out}} {
		switch {
		case d.d == nil || d.d.Mean == nil:
			r.NoWorkload = fmt.Sprintf("data.%s.mean is not set", d.name)
			return nil
		case d.d.Type != "" && d.d.Type != "normal" && d.d.Type != "fixed":
			r.NoWorkload = fmt.Sprintf("data.%s.type %s is not rebuilt (normal and fixed are)", d.name, d.d.Type)
			return nil
		}
	}
	configured := int(math.Round(*in.Mean))
	isl := r.promptLength(configured, measuredISL, "input_distribution.mean")
	spec := traces.SynthSpec{ISL: isl, ISLStddev: in.stddev(), OSL: int(math.Round(*out.Mean)), OSLStddev: out.stddev(),
		ISLRange: in.span(isl - configured), OSLRange: out.span(0), Seed: seedOf(cfg.Load.BaseSeed)}
	if spec.ISLStddev > 0 || spec.OSLStddev > 0 {
		r.note("the workload's lengths are normal draws clipped to the configured min and max (the input's moved by the measured ISL's offset from the configured mean), as inference-perf draws them; not the client's draws")
	}
	wl, err := synthesize(cfg, load, spec)
	if err != nil {
		return err
	}
	r.Workload = wl
	return nil
}

// span is the distribution's [min, max] moved by shift, where both are
// set; else none.
func (d *ipDistribution) span(shift int) [2]int {
	if d.Min == nil || d.Max == nil {
		return [2]int{}
	}
	return [2]int{max(1, *d.Min+shift), max(1, *d.Max+shift)}
}

func (d *ipDistribution) stddev() int {
	if d.Type == "fixed" || d.StdDev == nil {
		return 0
	}
	return int(math.Round(*d.StdDev))
}

// promptLength is the prompt length the server saw: the stage's measured
// mean when published, else the configured one.
func (r *Run) promptLength(configured int, measured float64, what string) int {
	if !(measured > 0) {
		return configured
	}
	n := int(math.Round(measured))
	if n != configured {
		r.note("the workload's ISL is %d, the measured prompt_len mean %.6g rounded (configured: %s = %d; inference-perf's text round trip changes token counts)",
			n, measured, what, configured)
	}
	return n
}

// synthesize generates the stage's requests with spec's lengths and
// prefixes.
func synthesize(cfg *ipConfig, load stageLoad, spec traces.SynthSpec) (*traces.Workload, error) {
	spec.Mode, spec.RequestCount, spec.Concurrency = load.mode, load.requests, load.concurrency
	if load.mode != traces.ModeConcurrency {
		spec.Rate = load.rate
	}
	wl, err := traces.Synthesize(spec)
	if err != nil {
		return nil, fmt.Errorf("%s: stage %d: %w", cfg.path, load.index, err)
	}
	return wl, nil
}

// repeatPrompts makes request i send the prompt of request i mod n.
func repeatPrompts(wl *traces.Workload, n int) {
	for i := n; i < len(wl.Requests); i++ {
		src := &wl.Requests[i%n]
		wl.Requests[i].InputLength = src.InputLength
		wl.Requests[i].HashIDs = slices.Clone(src.HashIDs)
	}
	wl.Digest = traces.ComputeDigest(wl.Requests)
}

func seedOf(seeds ...*int64) int64 {
	for _, s := range seeds {
		if s != nil {
			return *s
		}
	}
	return 0
}

// note records how the workload was rebuilt.
func (r *Run) note(format string, args ...any) {
	r.WorkloadNotes = append(r.WorkloadNotes, errors.New(r.Name+": "+fmt.Sprintf(format, args...)))
}

// inputConfig records the stage in AIPerf's input_config terms.
func (c *ipConfig) inputConfig(load stageLoad, wl *traces.Workload) (json.RawMessage, error) {
	api := "completions"
	if c.API.Type == "chat" {
		api = "chat"
	}
	ic := results.InputConfig{
		Endpoint: &results.EndpointConfig{ModelNames: []string{c.Server.ModelName}, Streaming: c.API.Streaming == nil || *c.API.Streaming, Type: api},
		Loadgen:  &results.LoadgenConfig{RequestCount: load.requests, RequestRate: load.rate, Concurrency: load.concurrency},
		Input:    &results.InputSection{Extra: [][2]any{{"ignore_eos", c.Server.IgnoreEOS != nil && *c.Server.IgnoreEOS}}},
	}
	if load.mode != traces.ModeConcurrency {
		ic.Loadgen.ArrivalPattern = load.mode
	}
	if wl != nil {
		if n := traces.Describe(wl).WarmupRequests; n > 0 {
			ic.Loadgen.WarmupRequestCount = &n
		}
	}
	ic.Workload = workloadInfo(wl)
	return encodeInputConfig(ic, FormatInferencePerf)
}

// workloadInfo records the rebuilt workload wl in input_config (nil for
// none), so that compare checks two runs replayed the same requests.
func workloadInfo(wl *traces.Workload) *results.WorkloadInfo {
	if wl == nil {
		return nil
	}
	return &results.WorkloadInfo{BlockSize: wl.BlockSize, Concurrency: wl.Concurrency, Digest: wl.Digest,
		Requests: len(wl.Requests), Source: wl.Source}
}
