package compare

import (
	"bufio"
	"bytes"
	"fmt"
	"os"

	"github.com/simbench/simbench/results"
)

// eachRecord streams the input's per-request records, in file order, to fn.
// The record passed to fn is only valid during the call.
func (in *Input) eachRecord(fn func(*results.RecordMetrics)) error {
	switch {
	case len(in.inline) > 0:
		for i, raw := range in.inline {
			m, err := dynoRecord(raw, i)
			if err != nil {
				return fmt.Errorf("%s: per_request[%d]: %w", in.Path, i, err)
			}
			fn(&m)
		}
		return nil
	case in.RecordsPath == "":
		return nil
	case in.recordsKind == recordsDynoSim:
		return eachDynoSimLine(in.RecordsPath, fn)
	}
	return eachAIPerfLine(in.RecordsPath, fn)
}

func eachAIPerfLine(path string, fn func(*results.RecordMetrics)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	jr := results.NewJSONLReader(f, path)
	for jr.Next() {
		fn(jr.Record())
	}
	return jr.Err()
}

func eachDynoSimLine(path string, fn func(*results.RecordMetrics)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<30)
	line, index := 0, 0
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		m, err := dynoRecord(sc.Bytes(), index)
		if err != nil {
			return &results.LineError{File: path, Line: line, Err: err}
		}
		index++
		fn(&m)
	}
	if err := sc.Err(); err != nil {
		return &results.LineError{File: path, Line: line + 1, Err: err}
	}
	return nil
}
