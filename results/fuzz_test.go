package results

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// FuzzReadJSONL: the reader never panics, and whatever it accepts is written
// back as valid JSON without non-finite numbers and re-read identically.
func FuzzReadJSONL(f *testing.F) {
	if b, err := os.ReadFile(fixtureJSONL); err == nil {
		for _, line := range strings.SplitN(string(b), "\n", 3)[:2] {
			f.Add(line)
		}
	}
	f.Add(`{"metadata":{"session_num":1},"metrics":{"inter_chunk_latency":{"value":[1,2],"unit":"ms"}},"error":{"code":499,"type":"x","message":"y"}}`)
	f.Add(`{"metadata":{"session_num":1},"metrics":{"request_latency":{"value":null,"unit":"ms"}}}`)
	f.Add(`{"metadata":null}`)
	f.Fuzz(func(t *testing.T, in string) {
		recs, err := ReadJSONL(strings.NewReader(in), "fuzz")
		if err != nil {
			return
		}
		var buf bytes.Buffer
		w := NewJSONLWriter(&buf)
		for i := range recs {
			if err := w.Write(&recs[i]); err != nil {
				t.Fatal(err)
			}
		}
		for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
			if len(line) > 0 && !json.Valid(line) {
				t.Fatalf("invalid JSON written: %s", line)
			}
		}
		if _, err := ReadJSONL(&buf, "again"); err != nil {
			t.Fatalf("re-reading written records: %v", err)
		}
		agg := NewAggregator(nil)
		for i := range recs {
			agg.Add(&recs[i])
		}
		var out bytes.Buffer
		if err := WriteProfileJSON(&out, agg.Profile()); err != nil {
			t.Fatal(err)
		}
		if !json.Valid(out.Bytes()) {
			t.Fatalf("invalid profile JSON: %s", out.String())
		}
	})
}

// FuzzReadProfileJSON: the reader never panics, and what it accepts is
// written back as valid JSON and read again to the same metrics.
func FuzzReadProfileJSON(f *testing.F) {
	if b, err := os.ReadFile(fixtureJSON); err == nil {
		f.Add(string(b))
	}
	f.Add(`{"schema_version":"1.5","request_latency":{"unit":"ms","avg":1,"p50":null,"count":3}}`)
	f.Add(`{"x":{"unit":5}}`)
	f.Fuzz(func(t *testing.T, in string) {
		p, err := ReadProfileJSON(strings.NewReader(in))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteProfileJSON(&buf, p); err != nil {
			return // e.g. input_config that is not an object we can indent
		}
		if !json.Valid(buf.Bytes()) {
			t.Fatalf("invalid JSON written: %s", buf.String())
		}
		again, err := ReadProfileJSON(&buf)
		if err != nil {
			t.Fatalf("re-reading: %v\n%s", err, buf.String())
		}
		if len(again.Metrics) != len(p.Metrics) {
			t.Fatalf("metrics %d → %d", len(p.Metrics), len(again.Metrics))
		}
	})
}
