package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

func mergeCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "merge the shard directories of one sharded run into the run directory one process would have written",
		UsageText: "simbench merge DIR... -o OUT\n\n   simbench merge out/s0 out/s1 out/s2 -o out/all",
		Description: "Each DIR is the output of `simbench run --shard I/N`. merge checks that they are the N shards\n" +
			"of one run (same workload digest, same configuration, same N, every index exactly once, no\n" +
			"request twice) and refuses otherwise, saying which directory differs and how. It then writes\n" +
			"OUT/profile_export.jsonl with every request of every shard, in send order (session_num\n" +
			"renumbered), and OUT/profile_export_aiperf.json/.csv aggregated once over all of them, so the\n" +
			"aggregates are what a single computation over the union gives: benchmark_duration spans from\n" +
			"the first send of any shard to the last response of any shard. input_config keeps the run's\n" +
			"configuration and lists the shards (host, start lateness, requests) under simbench.merged.\n\n" +
			"The shards of a `simbench sim --sweep --shard I/N` merge the same way: OUT gets every point's\n" +
			"run directory, sweep_summary.json and sweep_pareto.png, as the unsharded sweep writes them.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output-dir", Aliases: []string{"o"}, Required: true, Usage: "run `DIR` to write the merged files into"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print nothing but errors"},
		},
		Action: mergeAction,
	}
}

func mergeAction(c *cli.Context) error {
	dirs := c.Args().Slice()
	if len(dirs) == 0 {
		return usagef("merge needs the shard directories: simbench merge DIR... -o OUT")
	}
	if fileExists(filepath.Join(dirs[0], sweepSummaryName)) {
		return mergeSweep(c, dirs, c.String("output-dir"))
	}
	shards, err := loadShards(dirs)
	if err != nil {
		return err
	}
	if err := checkShardSet(shards); err != nil {
		return err
	}
	recs, err := shardRecords(shards)
	if err != nil {
		return err
	}
	out := c.String("output-dir")
	results.SortAsSent(recs)
	p, err := results.WriteRecordsRun(out, recs, mergedMeta(shards, recs, out), nil)
	if err != nil {
		return err
	}
	if !c.Bool("quiet") {
		printMerge(c.App.Writer, shards, recs, p, out)
	}
	return nil
}

// shardDir is one shard's run directory.
type shardDir struct {
	dir       string
	config    map[string]any // input_config
	spec      traces.ShardSpec
	digest    string
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
	if err := json.Unmarshal(p.InputConfig, &s.config); err != nil || s.config == nil {
		return nil, fmt.Errorf("%s: %s has no input_config", dir, results.ProfileJSONName)
	}
	sec, _ := s.config["simbench"].(map[string]any)
	sh, _ := sec["shard"].(map[string]any)
	idx, okI := sh["index"].(float64)
	cnt, okC := sh["count"].(float64)
	if !okI || !okC {
		return nil, fmt.Errorf("%s: not a shard (input_config has no simbench.shard): was it run with --shard I/N?", dir)
	}
	s.spec = traces.ShardSpec{Index: int(idx), Count: int(cnt)}
	s.digest, _ = sec["workload_digest"].(string)
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
	return missingShards("run", byIndex, len(shards), first.spec.Count)
}

// missingShards refuses an incomplete set: every index 0..count−1 must be
// among the given shards (what names a run or a sweep).
func missingShards(what string, byIndex map[int]string, given, count int) error {
	var missing []string
	for i := range count {
		if _, ok := byIndex[i]; !ok {
			missing = append(missing, traces.ShardSpec{Index: i, Count: count}.String())
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("incomplete %s: shard %s missing (given %d of %d shards)", what, strings.Join(missing, ", "), given, count)
	}
	return nil
}

func sameRun(first, s *shardDir, base map[string][]byte) error {
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

func mergeKeys(a, b map[string][]byte) map[string][]byte {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}

// perShard are the input_config fields that differ between the shards of
// one run (where each ran, how late, which part).
var perShard = map[string][]string{
	"output":   {"artifact_directory"},
	"simbench": {"host", "requests", "start_late_ms", "shard"},
}

// runIdentity is input_config without the per-shard fields, each section
// as canonical JSON: equal for every shard of one run.
func runIdentity(cfg map[string]any) (map[string][]byte, error) {
	out := make(map[string][]byte, len(cfg))
	for k, v := range cfg {
		if sec, ok := v.(map[string]any); ok && perShard[k] != nil {
			sec = maps.Clone(sec)
			for _, f := range perShard[k] {
				delete(sec, f)
			}
			v = sec
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("input_config.%s: %w", k, err)
		}
		out[k] = b
	}
	return out, nil
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
	sec, _ := shards[0].config["simbench"].(map[string]any)
	if at, ok := sec["start_at"].(string); ok {
		if t, err := time.Parse(time.RFC3339Nano, at); err == nil {
			meta.StartNs = t.UnixNano()
		}
	}
	for _, s := range shards {
		meta.WasCancelled = meta.WasCancelled || s.cancelled
	}
	return meta
}

func mergedConfig(shards []*shardDir, records int, out string) map[string]any {
	cfg := maps.Clone(shards[0].config)
	if o, ok := cfg["output"].(map[string]any); ok {
		o = maps.Clone(o)
		o["artifact_directory"] = out
		cfg["output"] = o
	}
	sec, _ := cfg["simbench"].(map[string]any)
	sec = maps.Clone(sec)
	for _, f := range perShard["simbench"] {
		delete(sec, f)
	}
	sec["requests"] = records
	list := make([]map[string]any, 0, len(shards))
	for _, s := range slices.SortedFunc(slices.Values(shards), func(a, b *shardDir) int { return a.spec.Index - b.spec.Index }) {
		ss, _ := s.config["simbench"].(map[string]any)
		e := map[string]any{"shard": s.spec.String(), "dir": s.dir, "records": s.records}
		for _, k := range []string{"host", "start_late_ms"} {
			if v, ok := ss[k]; ok {
				e[k] = v
			}
		}
		list = append(list, e)
	}
	sec["merged"] = map[string]any{"count": len(shards), "shards": list}
	cfg["simbench"] = sec
	return cfg
}

func printMerge(w io.Writer, shards []*shardDir, recs []results.RecordMetrics, p *results.Profile, out string) {
	worst, worstDir := 0.0, ""
	for _, s := range shards {
		sec, _ := s.config["simbench"].(map[string]any)
		if late, ok := sec["start_late_ms"].(float64); ok && late > worst {
			worst, worstDir = late, s.dir
		}
	}
	fmt.Fprintf(w, "merged %d shards: %d records\n", len(shards), len(recs))
	if d, ok := p.Value(results.TagBenchmarkDuration, "avg"); ok {
		fmt.Fprintf(w, "benchmark_duration %.3f s across all shards\n", d)
	}
	if worstDir != "" {
		fmt.Fprintf(w, "warning: %s started %.1f ms after --start-at\n", worstDir, worst)
	}
	for _, s := range shards {
		if s.cancelled {
			fmt.Fprintf(w, "warning: %s was interrupted: the merged run misses its unsent requests\n", s.dir)
		}
	}
	for _, name := range []string{results.RecordsName, results.ProfileJSONName, results.ProfileCSVName} {
		fmt.Fprintf(w, "wrote %s\n", filepath.Join(out, name))
	}
}
