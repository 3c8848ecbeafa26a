package servermetrics

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/simbench/simbench/results"
)

// WriteJSON writes e with AIPerf's layout (indent 2).
func WriteJSON(w io.Writer, e *Export) error {
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteFiles writes server_metrics_export.json and .csv into
// dir and, when the export breaks TTFT down, ttft_breakdown.json with its
// best breakdown, which it returns (nil when there is none).
func WriteFiles(dir string, e *Export) (*TTFTBreakdown, error) {
	if err := results.WriteFile(filepath.Join(dir, JSONName), func(w io.Writer) error {
		return WriteJSON(w, e)
	}); err != nil {
		return nil, err
	}
	if err := results.WriteFile(filepath.Join(dir, CSVName), func(w io.Writer) error {
		return writeCSV(w, e)
	}); err != nil {
		return nil, err
	}
	bs := TTFTBreakdowns(e)
	if len(bs) == 0 {
		return nil, nil
	}
	return bs[0], results.WriteFile(filepath.Join(dir, TTFTBreakdownName), func(w io.Writer) error {
		return WriteTTFTBreakdownJSON(w, bs[0])
	})
}

// ReadJSON reads a server_metrics_export.json, simbench's or
// AIPerf's.
func ReadJSON(r io.Reader) (*Export, error) {
	var e Export
	if err := json.NewDecoder(r).Decode(&e); err != nil {
		return nil, err
	}
	if e.Metrics == nil {
		return nil, fmt.Errorf("no \"metrics\" object: not a server metrics export")
	}
	return &e, nil
}

// LoadJSON reads a server_metrics_export.json file.
func LoadJSON(path string) (*Export, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	e, err := ReadJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return e, nil
}
