package validate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/simbench/simbench/compare"
	"github.com/simbench/simbench/internal/usage"
	"github.com/simbench/simbench/loadgen"
	"github.com/simbench/simbench/realrun"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// Pipeline is a `simbench validate` configuration file: what to run
// against (target), which workload both arms replay, how to get the
// simulator's configuration, how to judge the comparison and where the
// history goes. Relative paths in it are relative to the file's directory.
type Pipeline struct {
	Target   TargetSection  `yaml:"target"`
	Workload traces.Spec    `yaml:"workload"`
	Sim      SimSection     `yaml:"sim"`
	Compare  CompareSection `yaml:"compare"`
	History  HistorySection `yaml:"history"`
	// Sweep, when set, makes both arms load sweeps compared by SLO
	// capacity (see SweepSection).
	Sweep *SweepSection `yaml:"sweep"`
	// Repeat > 1 runs each arm that many times, interleaved in rotating
	// order after a discarded warm-up round, and compares the run lists.
	Repeat int `yaml:"repeat"`
	// Goodput is AIPerf's --goodput SLOs ("time_to_first_token:200
	// inter_token_latency:10"), applied to both arms: their aggregates get
	// good_request_count, goodput and slo_attainment.
	Goodput string `yaml:"goodput"`

	slos   []results.SLO
	path   string // the file, as given
	dir    string // its directory
	digest string // sha256 of the configuration as read (before overrides)
}

// TargetSection is the real OpenAI-compatible server (`simbench run`'s
// endpoint flags).
type TargetSection struct {
	URL                   string         `yaml:"url"`
	Model                 string         `yaml:"model"`
	EndpointType          string         `yaml:"endpoint_type"`
	Endpoint              string         `yaml:"endpoint"`
	APIKeyEnv             string         `yaml:"api_key_env"`
	HealthCheck           string         `yaml:"health_check"`
	HealthTimeoutSeconds  float64        `yaml:"health_timeout_seconds"`
	ExtraInputs           map[string]any `yaml:"extra_inputs"`
	UseLegacyMaxTokens    bool           `yaml:"use_legacy_max_tokens"`
	UseServerTokenCount   bool           `yaml:"use_server_token_count"`
	PerChunkUsage         bool           `yaml:"per_chunk_usage"`
	Tokenizer             string         `yaml:"tokenizer"` // run's --tokenizer, relative to this file
	RequestTimeoutSeconds *float64       `yaml:"request_timeout_seconds"`
	BenchmarkGracePeriod  *float64       `yaml:"benchmark_grace_period"`
	MaxErrorRate          string         `yaml:"max_error_rate"`
}

// SimSection says where the simulator's configuration comes from: a file,
// or a calibration (on the file as base, when given).
type SimSection struct {
	Config    string `yaml:"config"`
	Calibrate bool   `yaml:"calibrate"`
	// CalibrateFrom is a real run directory, "silicon" (the default):
	// this pipeline's own silicon run (the warm-up round's with repeat > 1,
	// so that the measured runs are held out), or "live": a calibration
	// plan of short runs on the target first (simbench calibrate --url),
	// none of them the pipeline's workload.
	CalibrateFrom string `yaml:"calibrate_from"`
	MaxEvals      int    `yaml:"max_evals"`
	// PlanRequests sizes a live calibration's runs (calibrate --url's
	// --plan-requests; 0 = its default).
	PlanRequests int `yaml:"plan_requests"`
}

// CalibrateFromSilicon is sim.calibrate_from's value for this pipeline's
// own silicon run.
const CalibrateFromSilicon = "silicon"

// CalibrateFromLive is sim.calibrate_from's value for a calibration plan
// run on the target before the pipeline's own runs.
const CalibrateFromLive = "live"

// CompareSection sets the bounds and the stall detection of the
// comparison (`simbench compare`'s flags).
type CompareSection struct {
	FailAbove    []string `yaml:"fail_above"`
	Gate         bool     `yaml:"gate"`
	StallK       *float64 `yaml:"stall_k"`
	StallFloorMs *float64 `yaml:"stall_floor_ms"`
	Alpha        float64  `yaml:"alpha"`
	// Plots (default true) draws OUTPUT/plots/*.png; false saves the
	// rendering time in a quick pull-request check.
	Plots *bool `yaml:"plots"`
}

// WantPlots is compare.plots, true when unset.
func (c CompareSection) WantPlots() bool { return c.Plots == nil || *c.Plots }

// HistorySection names the JSONL file one line per validation is appended
// to (default OUTPUT/history.jsonl).
type HistorySection struct {
	Path string `yaml:"path"`
}

// Load reads and checks a pipeline file. Every mistake is a usage
// error naming the file, the line where known and the key.
func Load(path string) (*Pipeline, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usage.Wrap(fmt.Errorf("--config: %w", err))
	}
	p, err := parsePipeline(b)
	if err != nil {
		return nil, usage.Wrap(fmt.Errorf("%s: %w", path, err))
	}
	p.path, p.dir = path, filepath.Dir(path)
	if err := p.check(); err != nil {
		return nil, usage.Wrap(fmt.Errorf("%s: %w", path, err))
	}
	return p, nil
}

// parsePipeline decodes the YAML strictly: unknown keys (reported with
// their line and full key) and mistyped values are errors.
func parsePipeline(b []byte) (*Pipeline, error) {
	p := &Pipeline{}
	if err := decodeStrict(b, p); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(mustJSON(p))
	p.digest = hex.EncodeToString(sum[:])
	return p, nil
}

// decodeStrict decodes the YAML document b into the struct v points to:
// unknown keys (reported with their line and full key) and mistyped
// values are errors.
func decodeStrict(b []byte, v any) error {
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return err
	}
	if len(root.Content) == 0 {
		return errors.New("empty pipeline file")
	}
	if err := checkPipelineKeys(root.Content[0], reflect.TypeOf(v), ""); err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// mustJSON encodes the exported configuration; it cannot fail for these
// types (extra_inputs values come from YAML scalars, lists and maps).
func mustJSON(p *Pipeline) []byte {
	b, err := json.Marshal(p)
	if err != nil {
		return []byte(fmt.Sprint(p))
	}
	return b
}

// checkPipelineKeys walks a mapping node against the struct it decodes
// into and reports the first unknown key as "line N: unknown key a.b
// (known keys of a: …)".
func checkPipelineKeys(n *yaml.Node, t reflect.Type, path string) error {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.SequenceNode && t.Kind() == reflect.Slice {
		for i, e := range n.Content {
			if err := checkPipelineKeys(e, t.Elem(), fmt.Sprintf("%s[%d].", strings.TrimSuffix(path, "."), i)); err != nil {
				return err
			}
		}
		return nil
	}
	if n.Kind != yaml.MappingNode || t.Kind() != reflect.Struct {
		return nil
	}
	fields := map[string]reflect.Type{}
	var names []string
	for i := range t.NumField() {
		if tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]; tag != "" && tag != "-" {
			fields[tag] = t.Field(i).Type
			names = append(names, tag)
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		ft, ok := fields[k.Value]
		if !ok {
			sort.Strings(names)
			return fmt.Errorf("line %d: unknown key %q (known keys of %s: %s)", k.Line, path+k.Value,
				orTop(path), strings.Join(names, ", "))
		}
		if err := checkPipelineKeys(n.Content[i+1], ft, path+k.Value+"."); err != nil {
			return err
		}
	}
	return nil
}

func orTop(path string) string {
	if path == "" {
		return "the pipeline"
	}
	return strings.TrimSuffix(path, ".")
}

// check validates the values and fills the defaults.
func (p *Pipeline) check() error {
	if err := p.Target.check(); err != nil {
		return err
	}
	if p.Repeat < 0 {
		return fmt.Errorf("repeat must be >= 1, got %d", p.Repeat)
	}
	p.Repeat = max(p.Repeat, 1)
	slos, err := results.ParseGoodput(p.Goodput)
	if err != nil {
		return fmt.Errorf("goodput: %v", err)
	}
	p.slos = slos
	if err := p.Sim.check(); err != nil {
		return err
	}
	if err := p.checkSweep(); err != nil {
		return err
	}
	return p.Compare.check()
}

func (t *TargetSection) check() error {
	switch {
	case strings.TrimSpace(t.URL) == "":
		return errors.New("target.url is required (the server's base URL, e.g. http://127.0.0.1:8000)")
	case strings.TrimSpace(t.Model) == "":
		return errors.New("target.model is required (the model name sent in every request)")
	case t.EndpointType != "" && t.EndpointType != "chat" && t.EndpointType != "completions":
		return fmt.Errorf("target.endpoint_type: want chat or completions, got %q", t.EndpointType)
	case t.HealthCheck != "" && t.HealthCheck != "none" && !strings.HasPrefix(t.HealthCheck, "/"):
		return fmt.Errorf("target.health_check: want a path such as /v1/models, or none, got %q", t.HealthCheck)
	case t.HealthTimeoutSeconds < 0:
		return fmt.Errorf("target.health_timeout_seconds must be >= 0, got %g", t.HealthTimeoutSeconds)
	}
	if t.MaxErrorRate != "" {
		if _, err := realrun.ParseErrorRate(t.MaxErrorRate); err != nil {
			return fmt.Errorf("target.max_error_rate: %v", err)
		}
	}
	return nil
}

func (s *SimSection) check() error {
	if s.Config == "" && !s.Calibrate {
		return errors.New("sim: give config (a `simbench sim --config` file), calibrate: true, or both (the file is then the calibration's base)")
	}
	if s.CalibrateFrom != "" && !s.Calibrate {
		return errors.New("sim.calibrate_from needs sim.calibrate: true")
	}
	if s.Calibrate && s.CalibrateFrom == "" {
		s.CalibrateFrom = CalibrateFromSilicon
	}
	if s.MaxEvals < 0 {
		return fmt.Errorf("sim.max_evals must be >= 0, got %d", s.MaxEvals)
	}
	return nil
}

func (c *CompareSection) check() error {
	if _, err := compare.ParseThresholds(c.FailAbove); err != nil {
		return fmt.Errorf("compare.fail_above: %v", err)
	}
	if c.Alpha == 0 {
		c.Alpha = compare.DefaultAlpha
	}
	if !(c.Alpha > 0 && c.Alpha < 1) {
		return fmt.Errorf("compare.alpha must be in (0, 1), got %g", c.Alpha)
	}
	if k := c.StallK; k != nil && !(*k > 0) {
		return fmt.Errorf("compare.stall_k must be > 0, got %g", *k)
	}
	if f := c.StallFloorMs; f != nil && !(*f >= 0) {
		return fmt.Errorf("compare.stall_floor_ms must be >= 0, got %g", *f)
	}
	return nil
}

// Resolve makes a path of the pipeline file relative to its directory.
func (p *Pipeline) Resolve(path string) string {
	if path == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(p.dir, path)
}

// Options are the comparison options: thresholds (with the default gate
// first when gate: true) and stall detection.
func (c CompareSection) Options() compare.Options {
	th, _ := compare.ParseThresholds(c.FailAbove) // checked by check
	if c.Gate {
		th = compare.WithDefaultGate(th)
	}
	stall := compare.DefaultStallOptions
	if c.StallK != nil {
		stall.K = *c.StallK
	}
	if c.StallFloorMs != nil {
		stall.FloorMs = *c.StallFloorMs
	}
	return compare.Options{Stall: stall, Thresholds: th, Alpha: c.Alpha}
}

// Path is the pipeline file, as given.
func (p *Pipeline) Path() string { return p.path }

// Digest is the sha256 of the configuration as read (before overrides).
func (p *Pipeline) Digest() string { return p.digest }

// workload is the workload section with the trace resolved against the
// pipeline's directory.
func (p *Pipeline) workload() traces.Spec {
	s := p.Workload
	if s.Trace != nil {
		t := p.Resolve(*s.Trace)
		s.Trace = &t
	}
	return s
}

// extraInputs are target.extra_inputs as request-body fields, in key order.
func (t TargetSection) extraInputs() ([]loadgen.Extra, error) {
	var out []loadgen.Extra
	for _, k := range slices.Sorted(maps.Keys(t.ExtraInputs)) {
		b, err := json.Marshal(t.ExtraInputs[k])
		if err != nil {
			return nil, usage.Errorf("target.extra_inputs.%s: %v", k, err)
		}
		x, err := loadgen.ParseExtra(k + ":" + string(b))
		if err != nil {
			return nil, usage.Wrap(err)
		}
		out = append(out, x)
	}
	return out, nil
}
