package results

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"strings"
)

// InputConfig is a run's input_config in profile_export_aiperf.json: the
// sections AIPerf writes (endpoint, input, loadgen, output) and simbench's
// own (workload, simbench, sim, sweep). Members are written in sorted key
// order. Members a section has no field for (AIPerf's cli_command,
// gpu_telemetry, …) are kept in Unknown and written back.
//
// Reading accepts the layout of older simbench runs, which kept the
// workload under simbench (workload_source, workload_digest, requests and
// shard.workload_requests): UnmarshalJSON moves it to Workload.
type InputConfig struct {
	Endpoint *EndpointConfig `json:"endpoint,omitempty"`
	Input    *InputSection   `json:"input,omitempty"`
	Loadgen  *LoadgenConfig  `json:"loadgen,omitempty"`
	Output   *OutputConfig   `json:"output,omitempty"`
	// Sim is the simulator's configuration (sim.Config as JSON), keyed as
	// in its YAML.
	Sim      json.RawMessage `json:"sim,omitempty"`
	Simbench *SimbenchInfo   `json:"simbench,omitempty"`
	Sweep    *SweepInfo      `json:"sweep,omitempty"`
	Workload *WorkloadInfo   `json:"workload,omitempty"`

	Unknown map[string]json.RawMessage `json:"-"`
}

// EndpointConfig is input_config.endpoint: the server and API.
type EndpointConfig struct {
	CustomEndpoint string   `json:"custom_endpoint,omitempty"`
	ModelNames     []string `json:"model_names"`
	Streaming      bool     `json:"streaming"`
	Type           string   `json:"type"`
	URL            string   `json:"url"`

	Unknown map[string]json.RawMessage `json:"-"`
}

// InputSection is input_config.input: the dataset (a trace file or a
// synthetic prompt) and the request body's extra members.
type InputSection struct {
	CustomDatasetType string `json:"custom_dataset_type,omitempty"`
	// Extra is the --extra-inputs members as [key, value] pairs; nil is
	// not written, empty is written as [].
	Extra                    [][2]any `json:"extra,omitzero"`
	File                     string   `json:"file,omitempty"`
	FixedSchedule            *bool    `json:"fixed_schedule,omitempty"`
	FixedScheduleAutoOffset  bool     `json:"fixed_schedule_auto_offset,omitempty"`
	FixedScheduleEndOffset   float64  `json:"fixed_schedule_end_offset,omitempty"`
	FixedScheduleSpeedup     float64  `json:"fixed_schedule_speedup,omitempty"`
	FixedScheduleStartOffset *float64 `json:"fixed_schedule_start_offset,omitempty"`
	// Goodput is --goodput as AIPerf records it: {metric tag: threshold
	// in display units}.
	Goodput    map[string]float64 `json:"goodput,omitempty"`
	Prompt     *Prompt            `json:"prompt,omitempty"`
	RandomSeed *int64             `json:"random_seed,omitempty"`

	Unknown map[string]json.RawMessage `json:"-"`
}

// Prompt is input_config.input.prompt: a synthetic workload's lengths.
type Prompt struct {
	InputTokens  TokenSpec `json:"input_tokens"`
	OutputTokens TokenSpec `json:"output_tokens"`
	TurnDelayMs  *float64  `json:"turn_delay_ms,omitempty"`
	Turns        int       `json:"turns,omitempty"`

	Unknown map[string]json.RawMessage `json:"-"`
}

// TokenSpec is a synthetic length distribution.
type TokenSpec struct {
	BlockSize *int    `json:"block_size,omitempty"`
	Mean      float64 `json:"mean"`
	Stddev    float64 `json:"stddev"`
}

// LoadgenConfig is input_config.loadgen: how requests are sent.
type LoadgenConfig struct {
	ArrivalPattern string `json:"arrival_pattern,omitempty"`
	// ArrivalSmoothness is the gamma arrivals' shape k (AIPerf's
	// --arrival-smoothness, vLLM's --burstiness): 1 is Poisson, below 1
	// burstier. Absent: 1.
	ArrivalSmoothness  *float64 `json:"arrival_smoothness,omitempty"`
	BenchmarkDuration  float64  `json:"benchmark_duration,omitempty"`
	Concurrency        int      `json:"concurrency,omitempty"`
	RandomSeed         *int64   `json:"random_seed,omitempty"`
	RequestCount       int      `json:"request_count"`
	RequestRate        float64  `json:"request_rate,omitempty"`
	WarmupRequestCount *int     `json:"warmup_request_count,omitempty"`

	Unknown map[string]json.RawMessage `json:"-"`
}

// OutputConfig is input_config.output.
type OutputConfig struct {
	ArtifactDirectory string `json:"artifact_directory"`

	Unknown map[string]json.RawMessage `json:"-"`
}

// WorkloadInfo is input_config.workload: the whole workload a run (or
// every shard of it) replays. Digest is the workload's identity. Spec,
// when present, is how it was made: the workload flags as given (the
// trace and every transform of it, or the synthetic keys; traces.Spec's
// keys), enough to build it again.
type WorkloadInfo struct {
	BlockSize   int             `json:"block_size"`
	Concurrency int             `json:"concurrency"`
	Digest      string          `json:"digest"`
	Requests    int             `json:"requests"`
	Source      string          `json:"source"`
	Spec        json.RawMessage `json:"spec,omitempty"`
}

// SimbenchInfo is input_config.simbench: where and when a real run ran,
// which shard it is, or the shards a merged run came from.
type SimbenchInfo struct {
	Host        string      `json:"host,omitempty"`
	Merged      *MergedInfo `json:"merged,omitempty"`
	Shard       *ShardInfo  `json:"shard,omitempty"`
	StartAt     string      `json:"start_at,omitempty"` // RFC 3339, the schedule's time zero
	StartLateMs *float64    `json:"start_late_ms,omitempty"`
}

// ShardInfo is the part of the workload one shard replays.
type ShardInfo struct {
	Count    int    `json:"count"`
	Digest   string `json:"digest"` // the shard's own requests
	Index    int    `json:"index"`
	Requests int    `json:"requests"`
	Spec     string `json:"spec"`
}

// MergedInfo lists the shards of a merged run.
type MergedInfo struct {
	Count   int           `json:"count"`
	Records int           `json:"records"`
	Shards  []MergedShard `json:"shards"`
}

// MergedShard is one shard of a merged run.
type MergedShard struct {
	Dir         string   `json:"dir"`
	Host        string   `json:"host,omitempty"`
	Records     int      `json:"records"`
	Shard       string   `json:"shard"`
	StartLateMs *float64 `json:"start_late_ms,omitempty"`
}

// SweepInfo is input_config.sweep: a sweep point's index and parameter
// values.
type SweepInfo struct {
	Index  int            `json:"index"`
	Params map[string]any `json:"params"`
}

// ParseInputConfig decodes an input_config; an absent one (empty or null)
// is the zero InputConfig.
func ParseInputConfig(raw json.RawMessage) (InputConfig, error) {
	var ic InputConfig
	if len(raw) == 0 {
		return ic, nil
	}
	if err := json.Unmarshal(raw, &ic); err != nil {
		return ic, fmt.Errorf("input_config: %w", err)
	}
	return ic, nil
}

// Encode is the input_config as compact JSON.
func (ic *InputConfig) Encode() (json.RawMessage, error) {
	b, err := json.Marshal(ic)
	if err != nil {
		return nil, fmt.Errorf("input_config: %w", err)
	}
	return b, nil
}

// MarshalJSON writes the known sections and Unknown.
func (ic InputConfig) MarshalJSON() ([]byte, error) {
	type plain InputConfig
	return encodeObject(plain(ic), ic.Unknown)
}

// UnmarshalJSON reads the sections, keeps the unknown ones and moves an
// older run's workload from simbench to Workload.
func (ic *InputConfig) UnmarshalJSON(b []byte) error {
	type plain InputConfig
	unknown, err := decodeObject(b, (*plain)(ic))
	if err != nil {
		return err
	}
	ic.Unknown = unknown
	return ic.upgrade(b)
}

// legacySimbench is the simbench section as runs before the workload
// section wrote it.
type legacySimbench struct {
	Simbench *struct {
		Source   string `json:"workload_source"`
		Digest   string `json:"workload_digest"`
		Requests int    `json:"requests"`
		Shard    *struct {
			WorkloadRequests int `json:"workload_requests"`
		} `json:"shard"`
	} `json:"simbench"`
}

func (ic *InputConfig) upgrade(b []byte) error {
	if ic.Workload != nil || ic.Simbench == nil {
		return nil
	}
	var old legacySimbench
	if err := json.Unmarshal(b, &old); err != nil {
		return err
	}
	sb := old.Simbench
	if sb.Digest == "" && sb.Source == "" {
		return nil
	}
	ic.Workload = &WorkloadInfo{Source: sb.Source, Digest: sb.Digest, Requests: sb.Requests}
	switch {
	case ic.Simbench.Shard != nil && sb.Shard != nil:
		ic.Simbench.Shard.Requests, ic.Workload.Requests = sb.Requests, sb.Shard.WorkloadRequests
	case ic.Simbench.Merged != nil:
		ic.Simbench.Merged.Records, ic.Workload.Requests = sb.Requests, 0
	}
	return nil
}

// MarshalJSON writes the known members and Unknown, the URL without its
// credentials (RedactURL).
func (e EndpointConfig) MarshalJSON() ([]byte, error) {
	type plain EndpointConfig
	e.URL = RedactURL(e.URL)
	return encodeObject(plain(e), e.Unknown)
}

// UnmarshalJSON reads the known members and keeps the others in Unknown.
func (e *EndpointConfig) UnmarshalJSON(b []byte) (err error) {
	type plain EndpointConfig
	e.Unknown, err = decodeObject(b, (*plain)(e))
	return err
}

// MarshalJSON writes the known members and Unknown.
func (s InputSection) MarshalJSON() ([]byte, error) {
	type plain InputSection
	return encodeObject(plain(s), s.Unknown)
}

// UnmarshalJSON reads the known members and keeps the others in Unknown.
func (s *InputSection) UnmarshalJSON(b []byte) (err error) {
	type plain InputSection
	s.Unknown, err = decodeObject(b, (*plain)(s))
	return err
}

// MarshalJSON writes the known members and Unknown.
func (p Prompt) MarshalJSON() ([]byte, error) {
	type plain Prompt
	return encodeObject(plain(p), p.Unknown)
}

// UnmarshalJSON reads the known members and keeps the others in Unknown.
func (p *Prompt) UnmarshalJSON(b []byte) (err error) {
	type plain Prompt
	p.Unknown, err = decodeObject(b, (*plain)(p))
	return err
}

// MarshalJSON writes the known members and Unknown.
func (l LoadgenConfig) MarshalJSON() ([]byte, error) {
	type plain LoadgenConfig
	return encodeObject(plain(l), l.Unknown)
}

// UnmarshalJSON reads the known members and keeps the others in Unknown.
func (l *LoadgenConfig) UnmarshalJSON(b []byte) (err error) {
	type plain LoadgenConfig
	l.Unknown, err = decodeObject(b, (*plain)(l))
	return err
}

// MarshalJSON writes the known members and Unknown.
func (o OutputConfig) MarshalJSON() ([]byte, error) {
	type plain OutputConfig
	return encodeObject(plain(o), o.Unknown)
}

// UnmarshalJSON reads the known members and keeps the others in Unknown.
func (o *OutputConfig) UnmarshalJSON(b []byte) (err error) {
	type plain OutputConfig
	o.Unknown, err = decodeObject(b, (*plain)(o))
	return err
}

// encodeObject marshals v (a struct whose fields are in key order) and adds
// the unknown members, all in sorted key order.
func encodeObject(v any, unknown map[string]json.RawMessage) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil || len(unknown) == 0 {
		return b, err
	}
	all := maps.Clone(unknown)
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	return json.Marshal(all) // map keys are sorted
}

// decodeObject unmarshals b into v (a pointer to a struct without JSON
// methods) and returns b's members v has no field for.
func decodeObject(b []byte, v any) (map[string]json.RawMessage, error) {
	if err := json.Unmarshal(b, v); err != nil {
		return nil, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	t := reflect.TypeOf(v).Elem()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		delete(all, name)
	}
	if len(all) == 0 {
		return nil, nil
	}
	return all, nil
}
