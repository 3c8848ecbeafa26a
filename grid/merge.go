package grid

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/simbench/simbench/capacity"
	"github.com/simbench/simbench/traces"
)

// Merge merges the shards of one `simbench sim --grid --shard I/N`
// into out: every point's run directory, copied as is, and the summary and
// Pareto plot of the whole grid, as the unsharded grid writes them; it
// returns the files written beside the points.
func Merge(dirs []string, out string) ([]string, error) {
	sums := make([]*Summary, len(dirs))
	for i, d := range dirs {
		s, err := loadSummary(d)
		if err != nil {
			return nil, err
		}
		sums[i] = s
	}
	if err := checkShards(dirs, sums); err != nil {
		return nil, err
	}
	merged := *sums[0]
	merged.Shard, merged.Results = nil, nil
	for i, s := range sums {
		for _, r := range s.Results {
			if err := copyPointDir(dirs[i], out, r.Dir); err != nil {
				return nil, err
			}
			merged.Results = append(merged.Results, r)
		}
	}
	if len(merged.Results) != merged.Points {
		return nil, fmt.Errorf("incomplete grid: %d of %d points in the shards", len(merged.Results), merged.Points)
	}
	return writeOutputs(out, &merged)
}

func loadSummary(dir string) (*Summary, error) {
	path := summaryPath(dir)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: not a grid shard: %w", dir, err)
	}
	var head struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if head.Kind != "" && head.Kind != capacity.KindConfigGrid {
		return nil, fmt.Errorf("%s: kind %q: a load sweep (simbench run or sim --sweep-concurrency/--sweep-rate), not a config-grid shard", path, head.Kind)
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if s.Shard == nil {
		return nil, fmt.Errorf("%s: a whole grid, not a shard: was it run with --shard I/N?", dir)
	}
	return &s, nil
}

// checkShards checks the summaries are the N shards of one grid, each
// once, and no point is in two of them.
func checkShards(dirs []string, sums []*Summary) error {
	first, byIndex, points := sums[0], map[int]string{}, map[int]string{}
	for i, s := range sums {
		switch {
		case s.Digest != first.Digest:
			return fmt.Errorf("%s and %s are shards of different grids: grid digest %s vs %s", dirs[0], dirs[i], first.Digest, s.Digest)
		case s.Shard.Count != first.Shard.Count:
			return fmt.Errorf("%s and %s are shards of different grids: shard count %d vs %d", dirs[0], dirs[i], first.Shard.Count, s.Shard.Count)
		}
		if prev, dup := byIndex[s.Shard.Index]; dup {
			return fmt.Errorf("shard %d/%d given twice: %s and %s", s.Shard.Index, s.Shard.Count, prev, dirs[i])
		}
		byIndex[s.Shard.Index] = dirs[i]
		for _, r := range s.Results {
			if prev, dup := points[r.Index]; dup {
				return fmt.Errorf("grid point %d is in %s and in %s", r.Index, prev, dirs[i])
			}
			points[r.Index] = dirs[i]
		}
	}
	return traces.MissingShards("grid", byIndex, len(sums), first.Shard.Count)
}

// copyPointDir copies a point's run directory from a shard into out.
func copyPointDir(shard, out, name string) error {
	if name == "" || filepath.Base(name) != name {
		return fmt.Errorf("%s: bad point directory %q in %s", shard, name, SummaryName)
	}
	dst := filepath.Join(out, name)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.CopyFS(dst, os.DirFS(filepath.Join(shard, name))); err != nil {
		return fmt.Errorf("copying %s: %w", filepath.Join(shard, name), err)
	}
	return nil
}

// IsGrid reports whether dir holds a grid's (or a grid shard's) summary:
// grid_summary.json, or the sweep_summary.json an older version wrote.
func IsGrid(dir string) bool {
	st, err := os.Stat(summaryPath(dir))
	return err == nil && st.Mode().IsRegular()
}

// summaryPath is dir's grid summary: grid_summary.json, or, when there is
// none, the legacy sweep_summary.json (whose kind loadSummary checks).
func summaryPath(dir string) string {
	path := filepath.Join(dir, SummaryName)
	if _, err := os.Stat(path); err == nil {
		return path
	}
	return filepath.Join(dir, LegacySummaryName)
}
