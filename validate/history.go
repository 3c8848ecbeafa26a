package validate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/simbench/simbench/compare"
)

// HistoryEntry is one line of the validation history (JSONL): what a
// nightly job appends after every run, for `simbench validate history`.
type HistoryEntry struct {
	Time         string             `json:"time"`             // RFC 3339, UTC, when the validation started
	Commit       string             `json:"commit,omitempty"` // $GITHUB_SHA or `git rev-parse HEAD`
	Pipeline     string             `json:"pipeline"`
	ConfigDigest string             `json:"config_digest"` // sha256 of the pipeline file's configuration
	Repeat       int                `json:"repeat"`
	Artifacts    string             `json:"artifacts"`
	Metrics      map[string]float64 `json:"metrics"`            // "metric.stat" → error % (of the medians with repeat > 1)
	PValues      map[string]float64 `json:"p_values,omitempty"` // repeat > 1: Mann–Whitney p per metric
	Bounds       map[string]float64 `json:"bounds,omitempty"`   // gated "metric.stat" → bound %
	Verdict      string             `json:"verdict"`            // pass, breach, incomplete, ungated or error
	Breaches     []string           `json:"breaches,omitempty"`
	// InSample marks a validation whose simulator was calibrated on a
	// silicon run it then scored: its errors are a fit, not a prediction.
	InSample bool `json:"in_sample,omitempty"`
	// Capacity is a load-sweep validation's SLO capacities (its error %
	// is also Metrics["capacity"]).
	Capacity *HistoryCapacity `json:"capacity,omitempty"`
	Error    string           `json:"error,omitempty"` // why a failed validation (verdict error) stopped
}

// DefaultHistoryPath is OUTPUT/history.jsonl.
func DefaultHistoryPath(out string) string { return filepath.Join(out, "history.jsonl") }

// historyEntry records the validation: its error % per headline statistic
// and verdict, or the error that stopped it.
func (v *validation) historyEntry(start time.Time, res *Outcome, runErr error) HistoryEntry {
	e := HistoryEntry{Time: start.UTC().Format(time.RFC3339), Commit: gitCommit(), Pipeline: v.p.path,
		ConfigDigest: v.p.digest, Repeat: v.p.Repeat, Artifacts: v.out, Metrics: map[string]float64{}}
	if runErr != nil {
		e.Verdict, e.Error = "error", runErr.Error()
		return e
	}
	for _, c := range res.chart {
		e.Metrics[c.Metric+"."+c.Stat] = *c.ErrorPct // chart rows have a defined error
	}
	e.PValues = res.pValues
	if res.sweep != nil {
		e.Capacity = historyCapacity(res.sweep)
		if p := e.Capacity.ErrorPct; p != nil {
			e.Metrics[compare.CapacityField] = *p
		}
	}
	e.Verdict, e.InSample = verdictName(res.list), res.inSample != ""
	for _, vd := range res.list {
		if e.Bounds == nil {
			e.Bounds = map[string]float64{}
		}
		e.Bounds[vd.Name()] = vd.MaxPct
		if vd.Status == compare.Breach {
			e.Breaches = append(e.Breaches, vd.Name())
		}
	}
	return e
}

// gitCommit is $GITHUB_SHA, else the checkout's HEAD, else "".
func gitCommit() string {
	if sha := strings.TrimSpace(os.Getenv("GITHUB_SHA")); sha != "" {
		return sha
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// AppendHistory appends one JSON line to path, creating it (and its
// directory) when needed.
func AppendHistory(path string, e HistoryEntry) (err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	_, err = f.Write(append(b, '\n'))
	return err
}

// ReadHistory reads every entry; a malformed line is an error naming it.
func ReadHistory(path string) ([]HistoryEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []HistoryEntry
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		t := bytes.TrimSpace(sc.Bytes())
		if len(t) == 0 {
			continue
		}
		var e HistoryEntry // unknown keys (a newer simbench's) are ignored
		if err := json.Unmarshal(t, &e); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}
