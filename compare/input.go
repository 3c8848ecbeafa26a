package compare

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/simbench/simbench/peerruns"
	"github.com/simbench/simbench/results"
)

// Input formats.
const (
	FormatAIPerf        = "aiperf"         // profile_export_aiperf.json, with its JSONL when present
	FormatAIPerfRecords = "aiperf-jsonl"   // profile_export.jsonl alone: aggregates computed from it
	FormatDynoSim       = "dynosim"        // DynoSim replay report JSON
	FormatDynoSimJSONL  = "dynosim-jsonl"  // DynoSim --per-request-jsonl alone
	recordsAIPerf       = "aiperf-records" // internal: how to decode RecordsPath
	recordsDynoSim      = "dynosim-records"
)

// Input is one side of a comparison, opened but not yet scanned.
type Input struct {
	Name   string // short label: the run directory or file name
	Path   string // what the user gave
	Format string
	// Profile is the run's aggregate. It is nil for a per-request file
	// alone: Scan then computes it with results.Aggregator in the same pass
	// that reads the records (what results.LoadRun would do in a pass of
	// its own).
	Profile *results.Profile
	// RecordsPath is the per-request JSONL, "" when the input has none.
	RecordsPath string
	recordsKind string
	inline      []json.RawMessage // a DynoSim report's inline per_request
	Warnings    []Warning
}

// HasRecords reports whether per-request records are available.
func (in *Input) HasRecords() bool { return in.RecordsPath != "" || len(in.inline) > 0 }

// Open opens a run directory, profile_export_aiperf.json,
// profile_export.jsonl, a DynoSim replay report or a DynoSim per-request
// JSONL, or another tool's run that package peerruns reads (an
// inference-perf report stage, a vllm bench serve result, a guidellm
// benchmark). AIPerf files go through results.LoadRun, except a
// per-request file alone, whose aggregates Scan computes in its single
// pass.
func Open(path string) (*Input, error) {
	if peerruns.Detect(path) != "" {
		return openPeer(path)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	switch {
	case st.IsDir():
		return openDir(path)
	case strings.HasSuffix(path, ".jsonl"):
		return openJSONL(path)
	}
	return openJSON(path)
}

func openDir(dir string) (*Input, error) {
	if !isFile(filepath.Join(dir, results.ProfileJSONName)) && isFile(filepath.Join(dir, results.RecordsName)) {
		in, err := openJSONL(filepath.Join(dir, results.RecordsName))
		if in != nil {
			in.Name, in.Path = filepath.Base(filepath.Clean(dir)), dir
		}
		return in, err
	}
	return loadRun(dir)
}

func loadRun(path string) (*Input, error) {
	run, err := results.LoadRun(path)
	if err != nil {
		return nil, err
	}
	in := &Input{Name: run.Name, Path: path, Format: FormatAIPerf, Profile: run.Profile, RecordsPath: run.RecordsPath}
	if in.RecordsPath != "" {
		in.recordsKind = recordsAIPerf
	}
	return in, nil
}

func openJSONL(path string) (*Input, error) {
	kind, err := sniffJSONL(path)
	if err != nil {
		return nil, err
	}
	in := &Input{Name: runName(path), Path: path, RecordsPath: path, recordsKind: kind, Format: FormatAIPerfRecords}
	if kind == recordsDynoSim {
		in.Format = FormatDynoSimJSONL
	}
	return in, nil
}

func openJSON(path string) (*Input, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(b, &top) != nil || !isDynoSimReport(top) {
		return loadRun(path)
	}
	rep, err := ReadDynoSimReport(bytes.NewReader(b), path)
	if err != nil {
		return nil, err
	}
	return &Input{Name: strings.TrimSuffix(filepath.Base(path), ".json"), Path: path, Format: FormatDynoSim,
		Profile: rep.Profile, inline: rep.PerRequest, recordsKind: recordsDynoSim, Warnings: rep.Warnings}, nil
}

// openPeer opens another tool's run: its aggregates, and its warnings
// about the definitions it does not share with AIPerf.
func openPeer(path string) (*Input, error) {
	run, err := peerruns.Open(path)
	if err != nil {
		return nil, err
	}
	in := &Input{Name: run.Name, Path: path, Format: run.Format, Profile: run.Profile}
	for _, w := range run.Warnings {
		in.Warnings = append(in.Warnings, Warning{Msg: w.Error()})
	}
	return in, nil
}

// Dir is the input's run directory: the directory given, or the one
// holding the file given; "" for an input without a path.
func (in *Input) Dir() string {
	if in.Path == "" {
		return ""
	}
	if st, err := os.Stat(in.Path); err == nil && st.IsDir() {
		return in.Path
	}
	return filepath.Dir(in.Path)
}

// AttachRecords sets the per-request JSONL of an input that has none in its
// directory, e.g. DynoSim's --per-request-jsonl beside its report.
func (in *Input) AttachRecords(path string) error {
	kind, err := sniffJSONL(path)
	if err != nil {
		return err
	}
	in.RecordsPath, in.recordsKind, in.inline = path, kind, nil
	return nil
}

// runName labels a file by its directory, as results.LoadRun does, or by
// its own name when it sits in the working directory.
func runName(path string) string {
	dir := filepath.Base(filepath.Dir(filepath.Clean(path)))
	if dir == "." || dir == "/" {
		return filepath.Base(path)
	}
	return dir
}

// sniffJSONL tells AIPerf's per-request lines ("metadata") from DynoSim's
// ("arrival_time_ms") by the first non-blank line.
func sniffJSONL(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	for {
		line, err := br.ReadBytes('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 {
			return classifyLine(path, t)
		}
		if errors.Is(err, io.EOF) {
			return recordsAIPerf, nil // empty file: no records either way
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
	}
}

func classifyLine(path string, line []byte) (string, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(line, &keys); err != nil {
		return "", fmt.Errorf("%s:1: malformed JSON: %w", path, err)
	}
	if _, ok := keys["metadata"]; ok {
		return recordsAIPerf, nil
	}
	if _, ok := keys["arrival_time_ms"]; ok {
		return recordsDynoSim, nil
	}
	return "", fmt.Errorf("%s:1: neither an AIPerf record (metadata) nor a DynoSim record (arrival_time_ms)", path)
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
