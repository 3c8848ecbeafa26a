package timing

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Table is a measured step-time table: step_ms on a grid of (prefill tokens,
// decode sequences), interpolated bilinearly and extrapolated linearly from
// the outermost grid cells. Results below 0 become 0.
//
// The CSV has a header naming the columns prefill_tokens, decode_seqs and
// step_ms (in any order, nothing else) and one row per grid point; every
// combination of the distinct prefill_tokens and decode_seqs values must be
// present exactly once, with at least two values of each. Blank lines and lines starting with # are skipped.
//
//	prefill_tokens,decode_seqs,step_ms
//	0,1,6.1
//	0,64,9.8
//	2048,1,52.0
//	2048,64,57.5
type Table struct {
	prefill, decode []float64   // grid axes, ascending
	ms              [][]float64 // ms[i][j] at prefill[i], decode[j]
}

// LoadTable reads a step-time CSV.
func LoadTable(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := ReadTable(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

type tablePoint struct{ p, d, ms float64 }

// ReadTable parses a step-time CSV (see Table).
func ReadTable(r io.Reader) (*Table, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = 3
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("reading header: %w", err)
	}
	col, err := tableColumns(header)
	if err != nil {
		return nil, err
	}
	var pts []tablePoint
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		line, _ := cr.FieldPos(0)
		pt, err := parsePoint(rec, col, line)
		if err != nil {
			return nil, err
		}
		pts = append(pts, pt)
	}
	return buildTable(pts)
}

func tableColumns(header []string) (map[string]int, error) {
	col := map[string]int{}
	for i, h := range header {
		h = strings.TrimSpace(h)
		if h != "prefill_tokens" && h != "decode_seqs" && h != "step_ms" {
			return nil, fmt.Errorf("line 1: unknown column %q (want prefill_tokens, decode_seqs, step_ms)", h)
		}
		col[h] = i
	}
	if len(col) != 3 {
		return nil, errors.New("line 1: header must name prefill_tokens, decode_seqs and step_ms once each")
	}
	return col, nil
}

func parsePoint(rec []string, col map[string]int, line int) (tablePoint, error) {
	var v [3]float64
	for i, name := range []string{"prefill_tokens", "decode_seqs", "step_ms"} {
		x, err := strconv.ParseFloat(strings.TrimSpace(rec[col[name]]), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return tablePoint{}, fmt.Errorf("line %d: column %s: want a number >= 0, got %q", line, name, rec[col[name]])
		}
		v[i] = x
	}
	return tablePoint{v[0], v[1], v[2]}, nil
}

func buildTable(pts []tablePoint) (*Table, error) {
	if len(pts) == 0 {
		return nil, errors.New("no rows")
	}
	t := &Table{}
	for _, p := range pts {
		t.prefill = append(t.prefill, p.p)
		t.decode = append(t.decode, p.d)
	}
	slices.Sort(t.prefill)
	slices.Sort(t.decode)
	t.prefill, t.decode = slices.Compact(t.prefill), slices.Compact(t.decode)
	if len(t.prefill) < 2 || len(t.decode) < 2 {
		return nil, fmt.Errorf("not a grid: %d prefill_tokens value(s) × %d decode_seqs value(s); want at least 2 of each to interpolate between",
			len(t.prefill), len(t.decode))
	}
	if len(t.prefill)*len(t.decode) != len(pts) {
		return nil, fmt.Errorf("not a full grid: %d prefill_tokens values × %d decode_seqs values need %d rows, got %d",
			len(t.prefill), len(t.decode), len(t.prefill)*len(t.decode), len(pts))
	}
	t.ms = make([][]float64, len(t.prefill))
	for i := range t.ms {
		t.ms[i] = make([]float64, len(t.decode))
		for j := range t.ms[i] {
			t.ms[i][j] = math.NaN()
		}
	}
	for _, p := range pts {
		i, _ := slices.BinarySearch(t.prefill, p.p)
		j, _ := slices.BinarySearch(t.decode, p.d)
		if !math.IsNaN(t.ms[i][j]) {
			return nil, fmt.Errorf("duplicate grid point prefill_tokens=%g decode_seqs=%g", p.p, p.d)
		}
		t.ms[i][j] = p.ms
	}
	return t, nil
}

// segment returns the index i of the grid cell [xs[i], xs[i+1]] used for x
// (the outermost cell when x is outside) and x's position t in it.
func segment(xs []float64, x float64) (int, float64) {
	if len(xs) == 1 {
		return 0, 0
	}
	i, _ := slices.BinarySearch(xs, x)
	i = min(max(i-1, 0), len(xs)-2)
	return i, (x - xs[i]) / (xs[i+1] - xs[i])
}

// At interpolates the step time for p prefill tokens and d decoding sequences.
func (t *Table) At(p, d float64) float64 {
	i, u := segment(t.prefill, p)
	j, v := segment(t.decode, d)
	at := func(a, b int) float64 {
		return t.ms[min(a, len(t.prefill)-1)][min(b, len(t.decode)-1)]
	}
	lo := at(i, j) + (at(i, j+1)-at(i, j))*v
	hi := at(i+1, j) + (at(i+1, j+1)-at(i+1, j))*v
	return max(0, lo+(hi-lo)*u)
}

func (t *Table) stepMs(s StepShape) float64 {
	return t.At(float64(s.PrefillTokens), float64(s.DecodeSeqs))
}
