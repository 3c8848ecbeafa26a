package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"

	"github.com/simbench/simbench/internal/usage"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/plots"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

// Files a sweep writes beside its point directories.
const (
	sweepSummaryName = "sweep_summary.json"
	sweepParetoName  = "sweep_pareto.png"
)

// Keys of sweepPoint.Metrics.
const (
	sweepTTFTP99      = "time_to_first_token_p99"
	sweepITLP99       = "inter_token_latency_p99"
	sweepOutTput      = "output_token_throughput"
	sweepOutPerWorker = "output_token_throughput_per_worker"
	sweepReqTput      = "request_throughput"
)

// sweepFlags are simbench sim's sweep flags.
func sweepFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "sweep", Usage: "simulate a grid of configurations from `YAML` (parameters: [{key: workers, values: [1, 2]}, …]; " +
			"keys are configuration keys, dotted, or speedup) into DIR/point_NNNN, with DIR/" + sweepSummaryName + " and DIR/" + sweepParetoName},
	}, shardSelectFlags("of the --sweep grid (0-based I): points I, I+N, …; `simbench merge` of the N shard directories writes the whole sweep")...)
}

// sweepSummary is sweep_summary.json: every point's parameters and headline
// metrics. A shard's summary lists only its points and has no Pareto flags.
type sweepSummary struct {
	Sweep          string       `json:"sweep"`
	Digest         string       `json:"sweep_digest"`
	WorkloadDigest string       `json:"workload_digest"`
	Parameters     []string     `json:"parameters"`
	Points         int          `json:"points"`
	Shard          *sweepShard  `json:"shard,omitempty"`
	Results        []sweepPoint `json:"results"`
}

type sweepShard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

type sweepPoint struct {
	Index      int                `json:"index"`
	Dir        string             `json:"dir"`
	Params     map[string]any     `json:"params"`
	Workers    int                `json:"workers"`
	Metrics    map[string]float64 `json:"metrics"`
	ParetoTTFT bool               `json:"pareto_ttft"`
	ParetoITL  bool               `json:"pareto_itl"`
}

// simSweep runs the --sweep grid (or the shard of it the flags name).
func simSweep(c *cli.Context, base sim.Config, wl *traces.Workload, input *results.InputConfig, dir string) error {
	if c.IsSet("repeat") {
		return usagef("--sweep and --repeat cannot be combined: sweep the seed instead (key: seed)")
	}
	sw, err := sim.LoadSweep(c.String("sweep"))
	if err != nil {
		return usage.Wrap(fmt.Errorf("--sweep %w", err))
	}
	spec, sharded, err := shardFromFlags(c)
	if err != nil {
		return err
	}
	todo, err := sweepPlan(sw, base, spec, sharded)
	if err != nil {
		return err
	}
	sum, err := newSweepSummary(c.String("sweep"), sw, base, wl, input)
	if err != nil {
		return err
	}
	if sharded {
		sum.Shard = &sweepShard{Index: spec.Index, Count: spec.Count}
	}
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400)) // as simRun
	}
	for _, pt := range todo {
		res, err := runSweepPoint(sw, pt, wl, input, dir)
		if err != nil {
			return err
		}
		if !c.Bool("quiet") {
			printSweepPoint(c.App.Writer, sw, pt, res, sum.Points)
		}
		sum.Results = append(sum.Results, res)
	}
	return writeSweepOutputs(c.App.Writer, dir, sum, c.Bool("quiet"))
}

// plannedPoint is a grid point with its configuration.
type plannedPoint struct {
	sim.SweepPoint
	cfg     sim.Config
	speedup float64
}

// sweepPlan applies every point of the grid (so a bad one fails before any
// runs) and keeps the shard's: points I, I+N, ….
func sweepPlan(sw *sim.Sweep, base sim.Config, spec traces.ShardSpec, sharded bool) ([]plannedPoint, error) {
	var out []plannedPoint
	for _, pt := range sw.Points() {
		cfg, speedup, err := sw.Apply(base, pt)
		if err != nil {
			return nil, usage.Wrap(err)
		}
		if !sharded || pt.Index%spec.Count == spec.Index {
			out = append(out, plannedPoint{SweepPoint: pt, cfg: cfg, speedup: speedup})
		}
	}
	return out, nil
}

// newSweepSummary starts the summary; its digest identifies the sweep (grid,
// base configuration, workload and input) for merging shards.
func newSweepSummary(file string, sw *sim.Sweep, base sim.Config, wl *traces.Workload, input *results.InputConfig) (*sweepSummary, error) {
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
	sum := &sweepSummary{Sweep: filepath.Base(file), Digest: hex.EncodeToString(h.Sum(nil)), WorkloadDigest: wl.Digest,
		Points: len(sw.Points()), Results: []sweepPoint{}}
	for _, p := range sw.Parameters {
		sum.Parameters = append(sum.Parameters, p.Key)
	}
	return sum, nil
}

func runSweepPoint(sw *sim.Sweep, pt plannedPoint, wl *traces.Workload, input *results.InputConfig, dir string) (sweepPoint, error) {
	res := sweepPoint{Index: pt.Index, Dir: fmt.Sprintf("point_%04d", pt.Index), Params: map[string]any{},
		Workers: pt.cfg.Workers, Metrics: map[string]float64{}}
	for i, p := range sw.Parameters {
		res.Params[p.Key] = pt.Values[i]
	}
	if pt.speedup > 0 {
		var err error
		if wl, err = traces.Apply(wl, traces.Filter{Speedup: pt.speedup}); err != nil {
			return res, fmt.Errorf("sweep point %d: %w", pt.Index, err)
		}
	}
	in := *input
	in.Sweep = &results.SweepInfo{Index: pt.Index, Params: res.Params}
	files, err := sim.WriteRun(context.Background(), filepath.Join(dir, res.Dir), pt.cfg, wl, &in)
	if err != nil {
		return res, fmt.Errorf("sweep point %d (%s): %w", pt.Index, sw.Describe(pt.SweepPoint), err)
	}
	for key, ts := range map[string][2]string{sweepTTFTP99: {results.TagTTFT, "p99"}, sweepITLP99: {results.TagITL, "p99"},
		sweepOutTput: {results.TagOutputThroughput, "avg"}, sweepReqTput: {results.TagRequestThroughput, "avg"}} {
		if v, ok := files.Profile.Value(ts[0], ts[1]); ok {
			res.Metrics[key] = v
		}
	}
	if v, ok := res.Metrics[sweepOutTput]; ok && res.Workers > 0 {
		res.Metrics[sweepOutPerWorker] = v / float64(res.Workers)
	}
	return res, nil
}

func printSweepPoint(w io.Writer, sw *sim.Sweep, pt plannedPoint, res sweepPoint, total int) {
	fmt.Fprintf(w, "point %d/%d (%s): TTFT p99 %.2f ms, ITL p99 %.2f ms, %.1f output tokens/s per worker\n",
		pt.Index+1, total, sw.Describe(pt.SweepPoint), res.Metrics[sweepTTFTP99], res.Metrics[sweepITLP99], res.Metrics[sweepOutPerWorker])
}

// writeSweepOutputs writes sweep_summary.json and, for a whole sweep (not
// a shard), marks the Pareto fronts and draws sweep_pareto.png.
func writeSweepOutputs(w io.Writer, dir string, sum *sweepSummary, quiet bool) error {
	slices.SortFunc(sum.Results, func(a, b sweepPoint) int { return cmp.Compare(a.Index, b.Index) })
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	written := []string{filepath.Join(dir, sweepSummaryName)}
	if sum.Shard == nil {
		markPareto(sum.Results)
		switch err := savePareto(filepath.Join(dir, sweepParetoName), sum.Results); {
		case err == nil:
			written = append(written, filepath.Join(dir, sweepParetoName))
		case !errors.Is(err, plots.ErrNoData):
			return err
		}
	}
	b, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(written[0], append(b, '\n'), 0o644); err != nil {
		return err
	}
	for _, f := range written {
		if !quiet {
			fmt.Fprintf(w, "wrote %s\n", f)
		}
	}
	return nil
}

// markPareto flags the points no other point beats on both output
// throughput per worker (higher) and the latency (lower).
func markPareto(pts []sweepPoint) {
	for i := range pts {
		pts[i].ParetoTTFT = onFront(pts, i, sweepTTFTP99)
		pts[i].ParetoITL = onFront(pts, i, sweepITLP99)
	}
}

func onFront(pts []sweepPoint, i int, latency string) bool {
	x, okX := pts[i].Metrics[latency]
	y, okY := pts[i].Metrics[sweepOutPerWorker]
	if !okX || !okY {
		return false
	}
	for j := range pts {
		ox, okX := pts[j].Metrics[latency]
		oy, okY := pts[j].Metrics[sweepOutPerWorker]
		if j != i && okX && okY && ox <= x && oy >= y && (ox < x || oy > y) {
			return false
		}
	}
	return true
}

func savePareto(path string, pts []sweepPoint) error {
	panel := func(latency, label string, front func(sweepPoint) bool) plots.ParetoPanel {
		pp := plots.ParetoPanel{Title: "Output throughput per worker vs " + label, XLabel: label + " (ms)",
			YLabel: "output tokens/s per worker"}
		for _, p := range pts {
			x, okX := p.Metrics[latency]
			y, okY := p.Metrics[sweepOutPerWorker]
			if okX && okY {
				pp.Points = append(pp.Points, plots.ParetoPoint{X: x, Y: y, Front: front(p)})
			}
		}
		return pp
	}
	fig, err := plots.Pareto(panel(sweepTTFTP99, "TTFT p99", func(p sweepPoint) bool { return p.ParetoTTFT }),
		panel(sweepITLP99, "ITL p99", func(p sweepPoint) bool { return p.ParetoITL }))
	if err != nil {
		return err
	}
	return plots.SavePNG(path, fig)
}
