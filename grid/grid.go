package grid

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/simbench/simbench/capacity"
	"github.com/simbench/simbench/internal/usage"
	"github.com/simbench/simbench/plots"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

// Files a grid writes beside its point directories. LegacySummaryName is
// the summary's name before the grid and the load sweep had different
// words: the readers still take it (with kind config_grid, or none).
const (
	SummaryName       = "grid_summary.json"
	LegacySummaryName = "sweep_summary.json"
	ParetoName        = "grid_pareto.png"
)

// Keys of Point.Metrics: the headline statistics of each point.
const (
	KeyTTFTP99           = "time_to_first_token_p99"
	KeyITLP99            = "inter_token_latency_p99"
	KeyOutputThroughput  = "output_token_throughput"
	KeyOutputPerWorker   = "output_token_throughput_per_worker"
	KeyRequestThroughput = "request_throughput"
)

// Summary is grid_summary.json: every point's parameters and headline
// metrics. A shard's summary lists only its points and has no Pareto flags.
type Summary struct {
	// Kind is "config_grid"; a load sweep's summary (package capacity)
	// is "load_sweep". Summaries written before kind existed have none.
	Kind string `json:"kind"`
	// File is the grid file's name (the key is the name older summaries
	// gave it).
	File           string   `json:"sweep"`
	Digest         string   `json:"sweep_digest"`
	WorkloadDigest string   `json:"workload_digest"`
	Parameters     []string `json:"parameters"`
	Points         int      `json:"points"`
	Shard          *Shard   `json:"shard,omitempty"`
	Results        []Point  `json:"results"`
}

// Shard names the part of the grid a shard's summary holds.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// Point is one grid point's parameters and metrics; the Pareto flags are
// set in a whole grid's summary.
type Point struct {
	Index      int                `json:"index"`
	Dir        string             `json:"dir"`
	Params     map[string]any     `json:"params"`
	Workers    int                `json:"workers"`
	Metrics    map[string]float64 `json:"metrics"`
	ParetoTTFT bool               `json:"pareto_ttft"`
	ParetoITL  bool               `json:"pareto_itl"`
}

// planned is a grid point with its configuration.
type planned struct {
	sim.GridPoint
	cfg     sim.Config
	speedup float64
}

// plan applies every point of the grid (so a bad one fails before any
// runs) and keeps the shard's: points I, I+N, ….
func plan(sw *sim.Grid, base sim.Config, spec *traces.ShardSpec) ([]planned, error) {
	var out []planned
	for _, pt := range sw.Points() {
		cfg, speedup, err := sw.Apply(base, pt)
		if err != nil {
			return nil, usage.Wrap(err)
		}
		if spec == nil || pt.Index%spec.Count == spec.Index {
			out = append(out, planned{GridPoint: pt, cfg: cfg, speedup: speedup})
		}
	}
	return out, nil
}

// newSummary starts the summary; its digest identifies the grid (its file,
// base configuration, workload and input) for merging shards.
func newSummary(file string, sw *sim.Grid, base sim.Config, wl *traces.Workload, input *results.InputConfig) (*Summary, error) {
	h := sha256.New()
	for _, v := range []any{sw, input, wl.Digest} {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		h.Write(b)
	}
	y, err := base.YAML()
	if err != nil {
		return nil, err
	}
	h.Write(y)
	sum := &Summary{Kind: capacity.KindConfigGrid, File: filepath.Base(file), Digest: hex.EncodeToString(h.Sum(nil)), WorkloadDigest: wl.Digest,
		Points: len(sw.Points()), Results: []Point{}}
	for _, p := range sw.Parameters {
		sum.Parameters = append(sum.Parameters, p.Key)
	}
	return sum, nil
}

func runPoint(ctx context.Context, sw *sim.Grid, pt planned, wl *traces.Workload, input *results.InputConfig, slos []results.SLO, dir string) (Point, error) {
	res := Point{Index: pt.Index, Dir: fmt.Sprintf("point_%04d", pt.Index), Params: map[string]any{},
		Workers: pt.cfg.Workers, Metrics: map[string]float64{}}
	for i, p := range sw.Parameters {
		res.Params[p.Key] = pt.Values[i]
	}
	if pt.speedup > 0 {
		var err error
		if wl, err = traces.Apply(wl, traces.Filter{Speedup: pt.speedup}); err != nil {
			return res, fmt.Errorf("grid point %d: %w", pt.Index, err)
		}
	}
	in := *input
	in.Sweep = &results.SweepInfo{Index: pt.Index, Params: res.Params}
	files, err := sim.WriteRun(ctx, filepath.Join(dir, res.Dir), pt.cfg, wl, &in, sim.WithSLOs(slos))
	if err != nil {
		return res, fmt.Errorf("grid point %d (%s): %w", pt.Index, sw.Describe(pt.GridPoint), err)
	}
	for key, ts := range map[string][2]string{KeyTTFTP99: {results.TagTTFT, "p99"}, KeyITLP99: {results.TagITL, "p99"},
		KeyOutputThroughput: {results.TagOutputThroughput, "avg"}, KeyRequestThroughput: {results.TagRequestThroughput, "avg"}} {
		if v, ok := files.Profile.Value(ts[0], ts[1]); ok {
			res.Metrics[key] = v
		}
	}
	if v, ok := res.Metrics[KeyOutputThroughput]; ok && res.Workers > 0 {
		res.Metrics[KeyOutputPerWorker] = v / float64(res.Workers)
	}
	return res, nil
}

// writeOutputs writes grid_summary.json and, for a whole grid (not a
// shard), marks the Pareto fronts and draws grid_pareto.png; it returns
// the files written.
func writeOutputs(dir string, sum *Summary) ([]string, error) {
	slices.SortFunc(sum.Results, func(a, b Point) int { return cmp.Compare(a.Index, b.Index) })
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	written := []string{filepath.Join(dir, SummaryName)}
	if sum.Shard == nil {
		MarkPareto(sum.Results)
		switch err := savePareto(filepath.Join(dir, ParetoName), sum.Results); {
		case err == nil:
			written = append(written, filepath.Join(dir, ParetoName))
		case !errors.Is(err, plots.ErrNoData):
			return nil, err
		}
	}
	b, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := results.WriteBytes(written[0], append(b, '\n')); err != nil {
		return nil, err
	}
	return written, nil
}

// MarkPareto flags the points no other point beats on both output
// throughput per worker (higher) and the latency (lower).
func MarkPareto(pts []Point) {
	for i := range pts {
		pts[i].ParetoTTFT = onFront(pts, i, KeyTTFTP99)
		pts[i].ParetoITL = onFront(pts, i, KeyITLP99)
	}
}

func onFront(pts []Point, i int, latency string) bool {
	x, okX := pts[i].Metrics[latency]
	y, okY := pts[i].Metrics[KeyOutputPerWorker]
	if !okX || !okY {
		return false
	}
	for j := range pts {
		ox, okX := pts[j].Metrics[latency]
		oy, okY := pts[j].Metrics[KeyOutputPerWorker]
		if j != i && okX && okY && ox <= x && oy >= y && (ox < x || oy > y) {
			return false
		}
	}
	return true
}

func savePareto(path string, pts []Point) error {
	panel := func(latency, label string, front func(Point) bool) plots.ParetoPanel {
		pp := plots.ParetoPanel{Title: "Output throughput per worker vs " + label, XLabel: label + " (ms)",
			YLabel: "output tokens/s per worker"}
		for _, p := range pts {
			x, okX := p.Metrics[latency]
			y, okY := p.Metrics[KeyOutputPerWorker]
			if okX && okY {
				pp.Points = append(pp.Points, plots.ParetoPoint{X: x, Y: y, Front: front(p)})
			}
		}
		return pp
	}
	fig, err := plots.Pareto(panel(KeyTTFTP99, "TTFT p99", func(p Point) bool { return p.ParetoTTFT }),
		panel(KeyITLP99, "ITL p99", func(p Point) bool { return p.ParetoITL }))
	if err != nil {
		return err
	}
	return plots.SavePNG(path, fig)
}
