package validate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/simbench/simbench/results"
)

// summaryColumns are the compare summary's fields: TTFT and ITL at avg and
// p99.
var summaryColumns = [4][2]string{{results.TagTTFT, "avg"}, {results.TagTTFT, "p99"},
	{results.TagITL, "avg"}, {results.TagITL, "p99"}}

// compareRows is the part of `simbench compare --format json` the summary
// reads.
type compareRows struct {
	Metrics []struct {
		Metric    string   `json:"metric"`
		Stat      string   `json:"stat"`
		Reference float64  `json:"reference"`
		Candidate float64  `json:"candidate"`
		ErrorPct  *float64 `json:"error_pct"`
	} `json:"metrics"`
}

// summaryCell is one statistic: real, simulated, compare's error %.
type summaryCell struct {
	real, sim float64
	err       *float64
}

func (c *compareRows) cell(metric, stat string) summaryCell {
	for _, m := range c.Metrics {
		if m.Metric == metric && m.Stat == stat {
			return summaryCell{m.Reference, m.Candidate, m.ErrorPct}
		}
	}
	return summaryCell{}
}

// compareSummary prints real / sim (error %) per workload whose
// compare.json exists, values in ms.
func compareSummary(dir string, names []string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%-10s", "workload")
	for _, col := range summaryColumns {
		name := map[string]string{results.TagTTFT: "TTFT", results.TagITL: "ITL"}[col[0]]
		fmt.Fprintf(&b, "  %-29s", name+" "+col[1]+" ms real/sim (err)")
	}
	b.WriteString("\n")
	for _, name := range names {
		path := filepath.Join(dir, name, "compare.json")
		if !exists(path) {
			continue
		}
		rows, err := readCompareRows(path)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%-10s", name)
		for _, col := range summaryColumns {
			c := rows.cell(col[0], col[1])
			e := "n/a"
			if c.err != nil {
				e = fmt.Sprintf("%+.1f%%", *c.err)
			}
			fmt.Fprintf(&b, "  %-29s", fmt.Sprintf("%.1f / %.1f (%s)", c.real, c.sim, e))
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

func readCompareRows(path string) (*compareRows, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c compareRows
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}
