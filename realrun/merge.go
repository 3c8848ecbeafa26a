package realrun

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/simbench/simbench/internal/warning"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// Merged is what Merge wrote.
type Merged struct {
	Dir     string
	Records int
	Profile *results.Profile
	// NoWorkload says why the merged run has no workload.jsonl ("" when
	// it has one).
	NoWorkload string
	shards     []*shardDir
}

// Merge checks that dirs are the N shard directories of one run (same
// workload digest, same configuration, same N, every index exactly once, no
// request twice) and writes out: every shard's records in send order and
// the aggregates computed once over all of them, with input_config listing
// the shards under simbench.merged, and the whole workload the shards' parts
// came from (workload.jsonl, built again from their spec and checked
// against their digest; see Merged.NoWorkload).
func Merge(dirs []string, out string) (*Merged, error) {
	shards, err := loadShards(dirs)
	if err != nil {
		return nil, err
	}
	if err := checkShardSet(shards); err != nil {
		return nil, err
	}
	recs, err := shardRecords(shards)
	if err != nil {
		return nil, err
	}
	results.SortAsSent(recs)
	var slos []results.SLO // the shards' --goodput (one run: all shards have the same)
	if in := shards[0].config.Input; in != nil {
		slos = results.GoodputSLOs(in.Goodput)
	}
	p, err := results.WriteRecordsRun(out, recs, mergedMeta(shards, recs, out), slos)
	if err != nil {
		return nil, err
	}
	why, err := writeMergedWorkload(shards[0], out)
	if err != nil {
		return nil, err
	}
	return &Merged{Dir: out, Records: len(recs), Profile: p, NoWorkload: why, shards: shards}, nil
}

// writeMergedWorkload writes out/workload.jsonl: the whole workload, built
// again from the shard's input_config.workload.spec (every shard has the
// same) and checked against the shards' digest. It returns why it wrote
// none when the workload cannot be built here or is not the shards'.
func writeMergedWorkload(s *shardDir, out string) (string, error) {
	wi := s.config.Workload
	if wi == nil || len(wi.Spec) == 0 {
		return "the shards do not record how their workload was built (input_config.workload.spec: written by an older simbench)", nil
	}
	fill := 0.0
	if lg := s.config.Loadgen; lg != nil {
		fill = lg.BenchmarkDuration
	}
	wl, err := traces.BuildJSON(wi.Spec, fill)
	if err != nil {
		return fmt.Sprintf("the shards' workload cannot be built again here: %v", err), nil
	}
	if wl.Digest != s.digest {
		return fmt.Sprintf("the workload built again from the shards' spec (digest %s) is not theirs (%s): has %s changed?",
			wl.Digest, s.digest, wl.Source), nil
	}
	return "", traces.WriteWorkloadFile(out, wl)
}

// shardDir is one shard's run directory.
type shardDir struct {
	dir       string
	config    results.InputConfig
	spec      traces.ShardSpec
	digest    string // the whole workload's
	cancelled bool
	records   int
}

func loadShards(dirs []string) ([]*shardDir, error) {
	out := make([]*shardDir, 0, len(dirs))
	for _, d := range dirs {
		s, err := loadShard(d)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func loadShard(dir string) (*shardDir, error) {
	p, err := results.LoadProfileJSON(filepath.Join(dir, results.ProfileJSONName))
	if err != nil {
		return nil, fmt.Errorf("%s: not a run directory: %w", dir, err)
	}
	s := &shardDir{dir: dir, cancelled: p.WasCancelled}
	if s.config, err = results.ParseInputConfig(p.InputConfig); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", dir, results.ProfileJSONName, err)
	}
	if s.config.Endpoint == nil && s.config.Simbench == nil {
		return nil, fmt.Errorf("%s: %s has no input_config", dir, results.ProfileJSONName)
	}
	if s.config.Simbench == nil || s.config.Simbench.Shard == nil {
		return nil, fmt.Errorf("%s: not a shard (input_config has no simbench.shard): was it run with --shard I/N?", dir)
	}
	sh := s.config.Simbench.Shard
	s.spec = traces.ShardSpec{Index: sh.Index, Count: sh.Count}
	if s.config.Workload != nil {
		s.digest = s.config.Workload.Digest
	}
	return s, s.spec.Validate()
}

// checkShardSet checks the shards are the N shards of one run, each once.
func checkShardSet(shards []*shardDir) error {
	first := shards[0]
	base, err := runIdentity(first.config)
	if err != nil {
		return err
	}
	byIndex := map[int]string{}
	for _, s := range shards {
		if err := sameRun(first, s, base); err != nil {
			return err
		}
		if prev, dup := byIndex[s.spec.Index]; dup {
			return fmt.Errorf("shard %s given twice: %s and %s", s.spec, prev, s.dir)
		}
		byIndex[s.spec.Index] = s.dir
	}
	return traces.MissingShards("run", byIndex, len(shards), first.spec.Count)
}

func sameRun(first, s *shardDir, base map[string]json.RawMessage) error {
	diff := func(what string, a, b any) error {
		return fmt.Errorf("%s and %s are shards of different runs: %s %v vs %v", first.dir, s.dir, what, a, b)
	}
	if s.digest != first.digest {
		return diff("workload digest", first.digest, s.digest)
	}
	if s.spec.Count != first.spec.Count {
		return diff("shard count", first.spec.Count, s.spec.Count)
	}
	id, err := runIdentity(s.config)
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(mergeKeys(base, id))) {
		if !bytes.Equal(base[k], id[k]) {
			return diff("input_config."+k, string(base[k]), string(id[k]))
		}
	}
	return nil
}

func mergeKeys(a, b map[string]json.RawMessage) map[string]json.RawMessage {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}

// runIdentity is input_config without the per-shard fields (where each
// shard ran, how late, which part), each section as JSON: equal for every
// shard of one run.
func runIdentity(ic results.InputConfig) (map[string]json.RawMessage, error) {
	if ic.Output != nil {
		o := *ic.Output
		o.ArtifactDirectory = ""
		ic.Output = &o
	}
	if ic.Simbench != nil {
		sb := *ic.Simbench
		sb.Host, sb.StartLateMs, sb.Shard = "", nil, nil
		ic.Simbench = &sb
	}
	b, err := ic.Encode()
	if err != nil {
		return nil, err
	}
	var out map[string]json.RawMessage
	return out, json.Unmarshal(b, &out)
}

// shardRecords loads every shard's records and checks that no request is
// in two shards (by x_request_id, and by trace row across shards).
func shardRecords(shards []*shardDir) ([]results.RecordMetrics, error) {
	var all []results.RecordMetrics
	ids := map[string]string{}
	rows := map[int]string{}
	for _, s := range shards {
		recs, err := results.LoadJSONL(filepath.Join(s.dir, results.RecordsName))
		if err != nil {
			return nil, err
		}
		s.records = len(recs)
		mine := map[int]bool{}
		for i := range recs {
			if err := claim(&recs[i], s, ids, rows, mine); err != nil {
				return nil, err
			}
		}
		all = append(all, recs...)
	}
	return all, nil
}

func claim(m *results.RecordMetrics, s *shardDir, ids map[string]string, rows map[int]string, mine map[int]bool) error {
	if id := m.Meta.XRequestID; id != "" {
		if prev, dup := ids[id]; dup {
			return fmt.Errorf("request %s is in %s and in %s: a request must be in one shard only", id, prev, s.dir)
		}
		ids[id] = s.dir
	}
	if m.Ext == nil || m.Ext.TraceRow < 0 || mine[m.Ext.TraceRow] {
		return nil // a shard may repeat its rows (a --benchmark-duration loop)
	}
	if prev, dup := rows[m.Ext.TraceRow]; dup {
		return fmt.Errorf("trace row %d is in %s and in %s: a request must be in one shard only", m.Ext.TraceRow, prev, s.dir)
	}
	rows[m.Ext.TraceRow], mine[m.Ext.TraceRow] = s.dir, true
	return nil
}

// mergedMeta is the merged run's metadata: the shards' common time origin
// (--start-at) or the first send, the last response, and input_config with
// the shards listed under simbench.merged.
func mergedMeta(shards []*shardDir, recs []results.RecordMetrics, out string) results.RunMeta {
	meta := results.RunMeta{InputConfig: mergedConfig(shards, len(recs), out)}
	for i := range recs {
		md := &recs[i].Meta
		if meta.StartNs == 0 || md.RequestStartNs < meta.StartNs {
			meta.StartNs = md.RequestStartNs
		}
		meta.EndNs = max(meta.EndNs, md.RequestEndNs)
	}
	if at := meta.InputConfig.Simbench.StartAt; at != "" {
		if t, err := time.Parse(time.RFC3339Nano, at); err == nil {
			meta.StartNs = t.UnixNano()
		}
	}
	for _, s := range shards {
		meta.WasCancelled = meta.WasCancelled || s.cancelled
	}
	return meta
}

// mergedConfig is the first shard's input_config with the merged run's
// directory and, under simbench, the common --start-at and the shards.
func mergedConfig(shards []*shardDir, records int, out string) *results.InputConfig {
	cfg := shards[0].config
	if cfg.Output != nil {
		o := *cfg.Output
		o.ArtifactDirectory = results.PublishedPath(out)
		cfg.Output = &o
	}
	merged := &results.MergedInfo{Count: len(shards), Records: records, Shards: make([]results.MergedShard, 0, len(shards))}
	for _, s := range slices.SortedFunc(slices.Values(shards), func(a, b *shardDir) int { return cmp.Compare(a.spec.Index, b.spec.Index) }) {
		sb := s.config.Simbench
		merged.Shards = append(merged.Shards, results.MergedShard{Shard: s.spec.String(), Dir: s.dir, Records: s.records,
			Host: sb.Host, StartLateMs: sb.StartLateMs})
	}
	cfg.Simbench = &results.SimbenchInfo{StartAt: cfg.Simbench.StartAt, Merged: merged}
	return &cfg
}

// WriteText prints what was merged: the shards, the records, the run's
// duration, the warnings and the files written.
func (m *Merged) WriteText(w io.Writer) {
	out := m.Dir
	fmt.Fprintf(w, "merged %d shards: %d records\n", len(m.shards), m.Records)
	if d, ok := m.Profile.Value(results.TagBenchmarkDuration, "avg"); ok {
		fmt.Fprintf(w, "benchmark_duration %.3f s across all shards\n", d)
	}
	warning.Print(w, m.Warnings())
	names := []string{results.RecordsName, results.ProfileJSONName, results.ProfileCSVName}
	if m.NoWorkload == "" {
		names = append(names, traces.WorkloadFile)
	}
	for _, name := range names {
		fmt.Fprintf(w, "wrote %s\n", filepath.Join(out, name))
	}
}

// Warnings are the merge's: the latest shard to start after --start-at,
// the interrupted shards and a missing workload file.
func (m *Merged) Warnings() []error {
	var ws []error
	worst, worstDir := 0.0, ""
	for _, s := range m.shards {
		if late := s.config.Simbench.StartLateMs; late != nil && *late > worst {
			worst, worstDir = *late, s.dir
		}
	}
	if worstDir != "" {
		ws = append(ws, fmt.Errorf("%s started %.1f ms after --start-at", worstDir, worst))
	}
	for _, s := range m.shards {
		if s.cancelled {
			ws = append(ws, fmt.Errorf("%s was interrupted: the merged run misses its unsent requests", s.dir))
		}
	}
	if m.NoWorkload != "" {
		ws = append(ws, fmt.Errorf("no %s in %s (calibrate --real cannot replay this run): %s", traces.WorkloadFile, m.Dir, m.NoWorkload))
	}
	return ws
}
