package silicon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/traces"
)

// Case is a held-out public run replayed from its own trace (the files of
// a testdata/heldout directory: case.json, sim.yaml, the trace): never
// fitted, only predicted, beside what other simulators predicted of it.
// Unlike a Stage it publishes percentiles of AIPerf's request-level ITL.
type Case struct {
	ID          string                `json:"id"`
	Source      json.RawMessage       `json:"source"`
	Setup       string                `json:"setup"`
	Trace       CaseTrace             `json:"trace"`
	Actual      ITLFigures            `json:"actual"`
	Peers       map[string]ITLFigures `json:"peers"`
	Assumptions []string              `json:"assumptions"`

	dir string
}

// CaseTrace is the trace a case replays and the filters the run applied.
type CaseTrace struct {
	File           string  `json:"file"`
	Source         string  `json:"source"`
	BlockSize      int     `json:"block_size"`
	EndOffsetMs    float64 `json:"end_offset_ms"`
	MaxTotalTokens int     `json:"max_total_tokens"`
	Requests       int     `json:"requests"` // what the filters leave: checked on replay
}

// ITLFigures are percentiles (ms) of AIPerf's inter_token_latency,
// (E2E − TTFT)/(OSL − 1) per request.
type ITLFigures struct {
	P50 *float64 `json:"itl_p50"`
	P90 *float64 `json:"itl_p90"`
	P99 *float64 `json:"itl_p99"`
}

// Values are the figures in p50, p90, p99 order.
func (f ITLFigures) Values() []*float64 { return []*float64{f.P50, f.P90, f.P99} }

// LoadCase reads the case in dir strictly (unknown fields are errors).
func LoadCase(dir string) (*Case, error) {
	path := filepath.Join(dir, "case.json")
	var c Case
	if err := decodeStrict(path, &c); err != nil {
		return nil, err
	}
	c.dir = dir
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}

func (c *Case) validate() error {
	switch {
	case c.ID == "":
		return errors.New("id: required")
	case c.Trace.File == "" || c.Trace.BlockSize <= 0 || c.Trace.Requests <= 0:
		return errors.New("trace: file, block_size and requests required")
	}
	for i, v := range c.Actual.Values() {
		if v == nil || !(*v > 0) || math.IsInf(*v, 0) {
			return fmt.Errorf("actual.itl_p%d: missing or out of range", []int{50, 90, 99}[i])
		}
	}
	return nil
}

// Config is the case's sim.yaml over the simulator's defaults, server
// metrics off (the case publishes none).
func (c *Case) Config() (sim.Config, error) {
	cfg, err := sim.LoadConfig(filepath.Join(c.dir, "sim.yaml"))
	if err != nil {
		return sim.Config{}, err
	}
	cfg.ServerMetrics.Enabled = false
	return cfg, nil
}

// Replay is the case's trace with its run's filters, capped to the first
// limit requests (whole sessions) when limit > 0.
func (c *Case) Replay(limit int) (*traces.Workload, error) {
	path := filepath.Join(c.dir, c.Trace.File)
	wl, _, err := traces.LoadMooncakeBlocks(path, c.Trace.BlockSize)
	if err != nil {
		return nil, err
	}
	f := traces.Filter{MaxTotalTokens: c.Trace.MaxTotalTokens, EndMs: c.Trace.EndOffsetMs}
	if wl, err = traces.Apply(wl, f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if n := len(wl.Requests); n != c.Trace.Requests {
		return nil, fmt.Errorf("%s: the filters leave %d requests, the case says %d", path, n, c.Trace.Requests)
	}
	if limit > 0 {
		if wl, err = traces.Apply(wl, traces.Filter{Limit: limit}); err != nil {
			return nil, err
		}
	}
	return wl, nil
}

// Simulate replays the case (the first limit requests when limit > 0) on
// cfg and returns the simulated ITL percentiles.
func (c *Case) Simulate(ctx context.Context, cfg sim.Config, limit int) (ITLFigures, error) {
	wl, err := c.Replay(limit)
	if err != nil {
		return ITLFigures{}, err
	}
	p, _, err := simulateProfile(ctx, cfg, wl, 0)
	if err != nil {
		return ITLFigures{}, fmt.Errorf("%s: %w", c.ID, err)
	}
	get := func(stat string) *float64 {
		if v, ok := p.Value(results.TagITL, stat); ok {
			return &v
		}
		return nil
	}
	return ITLFigures{P50: get("p50"), P90: get("p90"), P99: get("p99")}, nil
}

// WriteCaseMarkdown writes a case's table: each ITL percentile measured,
// simulated, its signed error, and each peer's error.
func WriteCaseMarkdown(b *bytes.Buffer, c *Case, got ITLFigures) {
	peers := make([]string, 0, len(c.Peers))
	for name := range c.Peers {
		peers = append(peers, name)
	}
	slices.Sort(peers)
	fmt.Fprintf(b, "### %s\n\n%s.\n\n| ITL | measured ms | simbench ms | simbench error |", c.ID, c.Setup)
	for _, p := range peers {
		fmt.Fprintf(b, " %s error |", p)
	}
	b.WriteString("\n|---|---:|---:|---:|")
	for range peers {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for i, name := range []string{"p50", "p90", "p99"} {
		real := c.Actual.Values()[i]
		fmt.Fprintf(b, "| %s | %.1f | %s | %s |", name, *real, ms(got.Values()[i]), signedPct(got.Values()[i], real))
		for _, p := range peers {
			fmt.Fprintf(b, " %s |", signedPct(c.Peers[p].Values()[i], real))
		}
		b.WriteString("\n")
	}
}

func ms(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%.1f", *v)
}

func signedPct(got, real *float64) string {
	e, ok := errPct(got, real)
	if !ok {
		return "—"
	}
	return fmt.Sprintf("%+.1f %%", e)
}
