package traces

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
)

// WorkloadFile is the name under which `simbench run` and `simbench sim`
// keep, in their run directory, the exact workload they replayed.
const WorkloadFile = "workload.jsonl"

// WriteJSONL writes wl as Mooncake JSONL, one request per line in order:
// timestamp (when set), input_length, output_length (when > 0), hash_ids
// (when any), session_id, delay (when > 0), parents (when any), text_input and warmup (simbench
// extension, when true). input_length is left out only for a text_input
// request with InputLength 0. ReadMooncake reads the output back to the same
// requests (and digest). Concurrency is not part of the format and is lost.
func WriteJSONL(w io.Writer, wl *Workload) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var line []byte
	for i := range wl.Requests {
		var err error
		line, err = appendRow(line[:0], &wl.Requests[i])
		if err != nil {
			return fmt.Errorf("write trace: request %d: %w", i, err)
		}
		if _, err := bw.Write(line); err != nil {
			return fmt.Errorf("write trace: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write trace: %w", err)
	}
	return nil
}

func appendRow(b []byte, r *Request) ([]byte, error) {
	if err := checkFinite(r); err != nil {
		return nil, err
	}
	b = append(b, '{')
	sep := func() {
		if len(b) > 1 {
			b = append(b, ", "...)
		}
	}
	if r.HasTimestamp {
		b = append(b, `"timestamp": `...)
		b = appendNumber(b, r.TimestampMs)
	}
	if r.TextInput == "" || r.InputLength != 0 {
		sep()
		b = append(b, `"input_length": `...)
		b = strconv.AppendInt(b, int64(r.InputLength), 10)
	}
	if r.OutputLength != 0 {
		sep()
		b = append(b, `"output_length": `...)
		b = strconv.AppendInt(b, int64(r.OutputLength), 10)
	}
	if len(r.HashIDs) > 0 {
		sep()
		b = appendHashIDs(b, r.HashIDs)
	}
	if r.SessionID != "" {
		sep()
		b = append(b, `"session_id": `...)
		b = appendString(b, r.SessionID)
	}
	if r.DelayMs != 0 {
		sep()
		b = append(b, `"delay": `...)
		b = appendNumber(b, r.DelayMs)
	}
	if len(r.Parents) > 0 {
		sep()
		b = append(b, `"parents": [`...)
		for i, p := range r.Parents {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = strconv.AppendInt(b, int64(p), 10)
		}
		b = append(b, ']')
	}
	if r.TextInput != "" {
		sep()
		b = append(b, `"text_input": `...)
		b = appendString(b, r.TextInput)
	}
	if r.Warmup {
		sep()
		b = append(b, `"warmup": true`...)
	}
	return append(b, "}\n"...), nil
}

func checkFinite(r *Request) error {
	for _, v := range []float64{r.TimestampMs, r.DelayMs} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("timestamp/delay %v is not a finite number", v)
		}
	}
	return nil
}

func appendHashIDs(b []byte, ids []int64) []byte {
	b = append(b, `"hash_ids": [`...)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return append(b, ']')
}

// appendNumber writes f as a JSON number: integers without a fraction, other
// values in the shortest form that parses back to the same float64.
func appendNumber(b []byte, f float64) []byte {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.AppendInt(b, int64(f), 10)
	}
	if math.Abs(f) < 1e21 && math.Abs(f) >= 1e-6 {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

func appendString(b []byte, s string) []byte {
	q, err := json.Marshal(s)
	if err != nil { // cannot happen for a string
		return strconv.AppendQuote(b, s)
	}
	return append(b, q...)
}
