package results

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// FormatTime formats wall-clock ns as AIPerf's start_time/end_time: naive
// local ISO time with microseconds (Python's datetime.fromtimestamp).
func FormatTime(ns int64) string {
	return time.Unix(0, ns).Local().Format("2006-01-02T15:04:05.000000")
}

// WriteProfileFiles writes profile_export_aiperf.json and .csv into dir.
func WriteProfileFiles(dir string, p *Profile) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := WriteFile(filepath.Join(dir, ProfileJSONName), func(w io.Writer) error { return WriteProfileJSON(w, p) }); err != nil {
		return err
	}
	return WriteFile(filepath.Join(dir, ProfileCSVName), func(w io.Writer) error { return WriteProfileCSV(w, p) })
}

// ErrNoRecords is the error for a per-request export without records: it
// has nothing to aggregate or compare.
var ErrNoRecords = errors.New("no records")

// SummarizeJSONL streams a per-request export and aggregates it. A file
// without records is an error (ErrNoRecords).
func SummarizeJSONL(path string, slos []SLO) (*Profile, error) {
	p, _, err := summarizeJSONL(path, slos, false)
	return p, err
}

// RecoverJSONL is SummarizeJSONL that drops a torn last line (one without
// its newline that does not parse: a write cut short by a full disk or a
// kill) and says so in a warning instead of failing.
func RecoverJSONL(path string, slos []SLO) (*Profile, []error, error) {
	return summarizeJSONL(path, slos, true)
}

func summarizeJSONL(path string, slos []SLO, allowTorn bool) (*Profile, []error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	agg := NewAggregator(slos)
	jr := NewJSONLReader(f, path)
	jr.AllowTorn = allowTorn
	for jr.Next() {
		agg.Add(jr.Record())
	}
	if err := jr.Err(); err != nil {
		return nil, nil, err
	}
	var warnings []error
	if t := jr.Torn(); t != nil {
		warnings = append(warnings, fmt.Errorf("%s:%d: the last line is torn (no newline, %v): left out", t.File, t.Line, t.Err))
	}
	if jr.Count() == 0 {
		return nil, warnings, fmt.Errorf("%s: %w", path, ErrNoRecords)
	}
	return agg.Profile(), warnings, nil
}

// Run is a run found on disk: its aggregate profile and, when present, the
// path of its per-request records.
type Run struct {
	Name        string   // a short label: the directory or file name
	Profile     *Profile // from profile_export_aiperf.json, else computed from the JSONL
	RecordsPath string   // profile_export.jsonl, or "" when the run has none
}

// LoadRun opens a run from a run directory, a profile_export_aiperf.json or a
// profile_export.jsonl (whose aggregates are computed on the fly).
func LoadRun(path string) (*Run, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return loadRunDir(path)
	}
	if strings.HasSuffix(path, ".jsonl") {
		p, err := SummarizeJSONL(path, nil)
		if err != nil {
			return nil, err
		}
		return &Run{Name: filepath.Base(filepath.Dir(path)), Profile: p, RecordsPath: path}, nil
	}
	p, err := LoadProfileJSON(path)
	if err != nil {
		return nil, err
	}
	run := &Run{Name: filepath.Base(filepath.Dir(path)), Profile: p}
	if rec := filepath.Join(filepath.Dir(path), RecordsName); fileExists(rec) {
		run.RecordsPath = rec
	}
	return run, nil
}

func loadRunDir(dir string) (*Run, error) {
	jsonPath := filepath.Join(dir, ProfileJSONName)
	recPath := filepath.Join(dir, RecordsName)
	switch {
	case fileExists(jsonPath):
		run, err := LoadRun(jsonPath)
		if err != nil {
			return nil, err
		}
		run.Name = filepath.Base(dir)
		return run, nil
	case fileExists(recPath):
		run, err := LoadRun(recPath)
		if err != nil {
			return nil, err
		}
		run.Name = filepath.Base(dir)
		return run, nil
	}
	return nil, fmt.Errorf("%s: no %s or %s in this directory", dir, ProfileJSONName, RecordsName)
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
