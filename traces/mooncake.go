package traces

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// maxLineBytes bounds one JSONL line (a 1M-token prompt in hash_ids is ~8 MB).
const maxLineBytes = 64 << 20

// RowError reports an invalid trace row. Its message names the file, the
// 1-based line and the offending field, e.g.
//
//	trace.jsonl:17: field "input_length": must be >= 0, got -3
type RowError struct {
	File  string
	Line  int
	Field string // "" when the row as a whole is bad (malformed JSON)
	Msg   string
}

func (e *RowError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: field %q: %s", e.File, e.Line, e.Field, e.Msg)
}

// Warning is a problem in a trace that does not stop it from loading.
// Line is the first line concerned (0 when it concerns the whole file).
type Warning struct {
	File string
	Line int
	Msg  string
}

func (w Warning) String() string {
	if w.Line == 0 {
		return fmt.Sprintf("%s: %s", w.File, w.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", w.File, w.Line, w.Msg)
}

// Error is String: a Warning is an error value, the shape warnings take.
func (w Warning) Error() string { return w.String() }

// LoadMooncake reads a Mooncake-format JSONL trace file; see ReadMooncake.
func LoadMooncake(path string) (*Workload, []Warning, error) {
	return LoadMooncakeBlocks(path, MooncakeBlockSize)
}

// LoadMooncakeBlocks reads a Mooncake-format JSONL trace file whose
// hash_ids are blocks of blockSize tokens (a workload synthesised with
// another --block-size than Mooncake's 512); see ReadMooncakeBlocks.
func LoadMooncakeBlocks(path string, blockSize int) (*Workload, []Warning, error) {
	return LoadTrace(path, FormatMooncake, blockSize)
}

func openTrace(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load trace: %w", err)
	}
	return f, nil
}

// ReadMooncake reads a Mooncake-format JSONL trace (one JSON object per line,
// blank lines skipped); name is used in error messages and as Source.
//
// Fields (unknown keys are ignored; null is the same as absent):
//   - timestamp (ms, int or float, >= 0; alias created_time, also in ms as in
//     Dynamo's mocker): the request is open-loop when present.
//   - input_length (alias input_tokens): ISL in tokens, 0..MaxTokens. Required unless
//     text_input is given (InputLength is then 0: the prompt is the text).
//   - output_length (alias output_tokens): requested OSL, 0..MaxTokens. Optional as in
//     AIPerf: when absent OutputLength is 0 ("server default") and a warning
//     is returned.
//   - hash_ids: prefix-block ids at 512 tokens per block (ReadMooncakeBlocks:
//     another size); needs input_length and must fit it:
//     0 < input_length − (len−1)·512 ≤ 512.
//   - session_id (string or number): rows sharing it are the turns of one
//     session, numbered in file order.
//   - delay (alias delay_ms): ms to wait after the previous turn completes, >= 0.
//   - text_input: literal prompt.
//   - parents (list of turn numbers): simbench extension written by
//     WriteJSONL for a session's DAG: the earlier turns of the session this
//     turn waits for, ascending (absent: the previous turn).
//   - warmup (bool): simbench extension written by WriteJSONL for warmup
//     requests; AIPerf ignores it.
//
// A key and its alias on the same row is an error, and so is a field given
// twice; a file in another encoding than UTF-8 (a byte-order mark, UTF-16)
// is refused naming the encoding. The first invalid row
// stops reading with a *RowError. Timestamps going backwards, missing
// output_length, rows without timestamps and delays on first turns are
// reported as warnings (one summary warning each).
func ReadMooncake(r io.Reader, name string) (*Workload, []Warning, error) {
	return ReadMooncakeBlocks(r, name, MooncakeBlockSize)
}

// ReadMooncakeBlocks is ReadMooncake for hash_ids of blockSize tokens a
// block, which the Workload keeps as its BlockSize.
func ReadMooncakeBlocks(r io.Reader, name string, blockSize int) (*Workload, []Warning, error) {
	if blockSize < 1 {
		return nil, nil, fmt.Errorf("%s: hash block size must be > 0, got %d", name, blockSize)
	}
	rd := newReader(name, blockSize)
	if err := scanRows(r, name, rd.add); err != nil {
		return nil, nil, err
	}
	if len(rd.reqs) == 0 {
		return nil, nil, fmt.Errorf("%s: no requests in trace", name)
	}
	wl := &Workload{
		Requests:  rd.reqs,
		BlockSize: blockSize,
		Source:    name,
		Digest:    ComputeDigest(rd.reqs),
	}
	return wl, rd.warnings(), nil
}

// scanRows checks r's encoding and hands each non-blank line of the JSONL
// file name, trimmed, to add with its 1-based line number.
func scanRows(r io.Reader, name string, add func(line []byte, lineNo int) error) error {
	r, err := checkEncoding(r, name)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), maxLineBytes)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			if err := add(line, lineNo); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("%s:%d: line longer than %d MiB: not a JSONL trace", name, lineNo+1, maxLineBytes>>20)
	} else if err != nil {
		return fmt.Errorf("%s:%d: read trace: %w", name, lineNo+1, err)
	}
	return nil
}

// rawRow is one decoded JSONL object. Scalars stay raw so that aliases,
// absence, null and type errors can be told apart with exact field names.
type rawRow struct {
	Timestamp    json.RawMessage `json:"timestamp"`
	CreatedTime  json.RawMessage `json:"created_time"`
	InputLength  json.RawMessage `json:"input_length"`
	InputTokens  json.RawMessage `json:"input_tokens"`
	OutputLength json.RawMessage `json:"output_length"`
	OutputTokens json.RawMessage `json:"output_tokens"`
	HashIDs      []int64         `json:"hash_ids"`
	SessionID    json.RawMessage `json:"session_id"`
	Delay        json.RawMessage `json:"delay"`
	DelayMs      json.RawMessage `json:"delay_ms"`
	TextInput    *string         `json:"text_input"`
	Warmup       *bool           `json:"warmup"`
	Parents      []int           `json:"parents"`
}

// summary counts rows that share one warning; first is the first line.
type summary struct {
	count, first int
	detail       string
}

func (s *summary) note(line int, detail string) {
	if s.count == 0 {
		s.first, s.detail = line, detail
	}
	s.count++
}

// reader accumulates requests and warning counts across rows.
type reader struct {
	file       string
	blockSize  int
	reqs       []Request
	turns      map[string]int
	lastTs     float64
	haveLastTs bool

	backwards, noOutput, noTimestamp, firstDelay summary
}

func newReader(file string, blockSize int) *reader {
	return &reader{file: file, blockSize: blockSize, turns: make(map[string]int)}
}

func (rd *reader) add(line []byte, lineNo int) error {
	req, missingOutput, ok := fastDecode(line, rd.blockSize)
	if !ok {
		var err error
		if req, missingOutput, err = parseRowSlow(line, rd.file, lineNo, rd.blockSize); err != nil {
			return err
		}
	}
	req.Row = len(rd.reqs)
	req.Line = lineNo
	if req.SessionID != "" {
		req.Turn = rd.turns[req.SessionID]
		rd.turns[req.SessionID] = req.Turn + 1
	}
	if msg := checkParents(&req); msg != "" {
		return &RowError{File: rd.file, Line: lineNo, Field: "parents", Msg: msg}
	}
	rd.noteWarnings(&req, missingOutput)
	rd.reqs = append(rd.reqs, req)
	return nil
}

func (rd *reader) noteWarnings(req *Request, missingOutput bool) {
	if missingOutput {
		rd.noOutput.note(req.Line, "")
	}
	if req.Turn == 0 && req.DelayMs > 0 {
		rd.firstDelay.note(req.Line, "")
	}
	if !req.HasTimestamp {
		rd.noTimestamp.note(req.Line, "")
		return
	}
	if rd.haveLastTs && req.TimestampMs < rd.lastTs {
		rd.backwards.note(req.Line, fmt.Sprintf("%s ms after %s ms",
			formatNumber(req.TimestampMs), formatNumber(rd.lastTs)))
	}
	rd.lastTs, rd.haveLastTs = req.TimestampMs, true
}

func (rd *reader) warnings() []Warning {
	var ws []Warning
	n := len(rd.reqs)
	if s := rd.backwards; s.count > 0 {
		ws = append(ws, Warning{rd.file, s.first, fmt.Sprintf(
			"timestamps go backwards on %d row(s), first here (%s); requests keep file order",
			s.count, s.detail)})
	}
	if s := rd.noOutput; s.count > 0 {
		ws = append(ws, Warning{rd.file, s.first, fmt.Sprintf(
			"%d of %d row(s) have no output_length, first here; they are sent without max_tokens (OutputLength 0)",
			s.count, n)})
	}
	if s := rd.noTimestamp; s.count > 0 && s.count < n {
		ws = append(ws, Warning{rd.file, s.first, fmt.Sprintf(
			"%d of %d row(s) have no timestamp, first here; they are sent closed-loop and need a concurrency limit",
			s.count, n)})
	}
	if s := rd.firstDelay; s.count > 0 {
		ws = append(ws, Warning{rd.file, s.first, fmt.Sprintf(
			"%d session first turn(s) carry a delay, first here; there is no previous turn, so it is ignored",
			s.count)})
	}
	return ws
}

// parseRowSlow decodes and validates one non-blank line with
// encoding/json: the reference rowDecoder must match, and the path that
// reports errors. missingOutput reports an absent output_length; hash_ids
// are blocks of blockSize tokens.
func parseRowSlow(line []byte, file string, lineNo, blockSize int) (req Request, missingOutput bool, err error) {
	fail := func(field, format string, args ...any) error {
		return &RowError{File: file, Line: lineNo, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	var raw rawRow
	if err := json.Unmarshal(line, &raw); err != nil {
		return req, false, decodeError(err, fail)
	}
	if k, dup := repeatedKey(line); dup {
		return req, false, fail(k, "given twice in the row (a JSON decoder would keep one silently)")
	}
	if err := parseTimes(&raw, &req, fail); err != nil {
		return req, false, err
	}
	if err := parseLengths(&raw, &req, &missingOutput, fail); err != nil {
		return req, false, err
	}
	if err := parseHashIDs(&raw, &req, blockSize, fail); err != nil {
		return req, false, err
	}
	if req.SessionID, err = sessionID(raw.SessionID, fail); err != nil {
		return req, false, err
	}
	if raw.Warmup != nil {
		req.Warmup = *raw.Warmup
	}
	if len(raw.Parents) > 0 {
		req.Parents = raw.Parents
	}
	return req, missingOutput, nil
}

type failFunc func(field, format string, args ...any) error

func decodeError(err error, fail failFunc) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return fail("", "malformed row: want a JSON object, got JSON %s", te.Value)
		}
		return fail(te.Field, "must be %s, got JSON %s", jsonKind(te.Type.String()), te.Value)
	}
	return fail("", "malformed JSON: %v", err)
}

// jsonKind names a Go target type in JSON terms.
func jsonKind(goType string) string {
	switch goType {
	case "int64", "[]int64", "int", "[]int":
		return "a list of integers"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	}
	return goType
}

func parseTimes(raw *rawRow, req *Request, fail failFunc) error {
	val, name, err := pick(raw.Timestamp, "timestamp", raw.CreatedTime, "created_time", fail)
	if err != nil {
		return err
	}
	if val != nil {
		ts, err := nonNegFloat(val, name, fail)
		if err != nil {
			return err
		}
		req.TimestampMs, req.HasTimestamp = ts, true
	}
	val, name, err = pick(raw.Delay, "delay", raw.DelayMs, "delay_ms", fail)
	if err != nil || val == nil {
		return err
	}
	req.DelayMs, err = nonNegFloat(val, name, fail)
	return err
}

func parseLengths(raw *rawRow, req *Request, missingOutput *bool, fail failFunc) error {
	if raw.TextInput != nil {
		req.TextInput = *raw.TextInput
	}
	val, name, err := pick(raw.InputLength, "input_length", raw.InputTokens, "input_tokens", fail)
	if err != nil {
		return err
	}
	switch {
	case val != nil:
		if req.InputLength, err = nonNegInt(val, name, fail); err != nil {
			return err
		}
	case raw.TextInput == nil:
		return fail("input_length", "missing: give input_length (or text_input)")
	}
	val, name, err = pick(raw.OutputLength, "output_length", raw.OutputTokens, "output_tokens", fail)
	if err != nil {
		return err
	}
	if val == nil {
		*missingOutput = true
		return nil
	}
	req.OutputLength, err = nonNegInt(val, name, fail)
	return err
}

func parseHashIDs(raw *rawRow, req *Request, bs int, fail failFunc) error {
	n := len(raw.HashIDs)
	if n == 0 {
		return nil
	}
	if nonNull(raw.InputLength) == nil && nonNull(raw.InputTokens) == nil {
		return fail("hash_ids", "needs input_length (hash_ids describe input_length tokens, not text_input)")
	}
	if !hashIDsConsistent(req.InputLength, n, bs) {
		return fail("hash_ids", "%d block(s) do not fit input_length %d: at %d tokens per block it needs %d "+
			"(every block but the last is full: 0 < input_length − (blocks−1)·%d ≤ %d)",
			n, req.InputLength, bs, blocksFor(req.InputLength, bs), bs, bs)
	}
	req.HashIDs = raw.HashIDs
	return nil
}

// pick returns whichever of a key and its alias is present (null counts as
// absent) and the name it was given under; both present is an error.
func pick(a json.RawMessage, aName string, b json.RawMessage, bName string, fail failFunc) (json.RawMessage, string, error) {
	a, b = nonNull(a), nonNull(b)
	switch {
	case a != nil && b != nil:
		return nil, "", fail(bName, "conflicts with %q (an alias); give only one", aName)
	case b != nil:
		return b, bName, nil
	}
	return a, aName, nil
}

func nonNull(v json.RawMessage) json.RawMessage {
	if v == nil || string(v) == "null" {
		return nil
	}
	return v
}

// number parses a JSON number literal; strings, booleans and other JSON
// values are rejected.
func number(v json.RawMessage, name string, fail failFunc) (float64, error) {
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return 0, fail(name, "must be a number, got %s", clip(v))
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, fail(name, "must be a finite number, got %s", clip(v))
	}
	if f == 0 {
		f = 0 // drop the sign of -0
	}
	return f, nil
}

func nonNegFloat(v json.RawMessage, name string, fail failFunc) (float64, error) {
	f, err := number(v, name, fail)
	if err != nil {
		return 0, err
	}
	if f < 0 {
		return 0, fail(name, "must be >= 0, got %s", clip(v))
	}
	return f, nil
}

// nonNegInt parses a non-negative integer; an integral float such as 512.0 is
// accepted.
func nonNegInt(v json.RawMessage, name string, fail failFunc) (int, error) {
	f, err := number(v, name, fail)
	if err != nil {
		return 0, err
	}
	if !isTokenCount(math.Abs(f)) {
		return 0, fail(name, "must be an integer token count of at most %d, got %s", MaxTokens, clip(v))
	}
	if f < 0 {
		return 0, fail(name, "must be >= 0, got %s", clip(v))
	}
	return int(f), nil
}

// MaxTokens bounds a request's input or output length: 16.8 M tokens, past
// the longest context any model serves (10 M), so that a typo does not build
// a prompt of gigabytes.
const MaxTokens = 1 << 24

// isTokenCount reports whether f is a non-negative integer token count.
func isTokenCount(f float64) bool { return f >= 0 && f == math.Trunc(f) && f <= MaxTokens }

// sessionID accepts a string or a number (kept as its literal text).
func sessionID(v json.RawMessage, fail failFunc) (string, error) {
	return idText(v, "session_id", fail)
}

// idText reads field, an id given as a string or a number (kept as its
// literal text); null is "".
func idText(v json.RawMessage, field string, fail failFunc) (string, error) {
	v = nonNull(v)
	if v == nil {
		return "", nil
	}
	if v[0] == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", fail(field, "malformed string: %v", err)
		}
		return s, nil
	}
	if _, err := number(v, field, fail); err != nil {
		return "", fail(field, "must be a string or a number, got %s", clip(v))
	}
	return string(v), nil
}

// clip shortens a raw JSON value for an error message.
func clip(v []byte) string {
	const max = 40
	if len(v) > max {
		return string(v[:max]) + "…"
	}
	return string(v)
}

// formatNumber formats a float without a trailing ".0" when it is integral.
func formatNumber(f float64) string {
	return string(appendNumber(nil, f))
}

// checkEncoding refuses a trace that is not plain UTF-8, naming its
// encoding (the JSON error would be "invalid character 'ï'"). It returns a
// reader of the whole stream.
func checkEncoding(r io.Reader, name string) (io.Reader, error) {
	var head [4]byte
	n, err := io.ReadFull(r, head[:])
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("%s: read trace: %w", name, err)
	}
	if enc := encodingOf(head[:n]); enc != "" {
		return nil, &RowError{File: name, Line: 1, Msg: "the file is " + enc + ": save it as UTF-8 without a byte-order mark"}
	}
	return io.MultiReader(bytes.NewReader(head[:n]), r), nil
}

// encodingOf names the encoding of a text starting with b when it is not
// plain UTF-8 (a byte-order mark, or the NUL bytes of UTF-16 or UTF-32
// around ASCII), else "".
func encodingOf(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte{0xEF, 0xBB, 0xBF}):
		return "UTF-8 with a byte-order mark (EF BB BF)"
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE, 0, 0}), len(b) == 4 && b[0] != 0 && b[1] == 0 && b[2] == 0 && b[3] == 0:
		return "UTF-32LE"
	case bytes.HasPrefix(b, []byte{0, 0, 0xFE, 0xFF}), len(b) == 4 && b[0] == 0 && b[1] == 0 && b[2] == 0 && b[3] != 0:
		return "UTF-32BE"
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}), len(b) >= 2 && b[0] != 0 && b[1] == 0:
		return "UTF-16LE"
	case bytes.HasPrefix(b, []byte{0xFE, 0xFF}), len(b) >= 2 && b[0] == 0 && b[1] != 0:
		return "UTF-16BE"
	}
	return ""
}

// repeatedKey returns a field given twice in a row's object, where a key
// that matches a field case-insensitively counts as that field (as
// encoding/json matches them); unknown keys are ignored, repeated or not.
// line is valid JSON. Only rows that the fast decoder declined get here (it
// declines every repeated field), so valid traces never pay for it.
func repeatedKey(line []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", false
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return "", false
		}
		k, _ := t.(string)
		if f := knownKey(k); f != "" {
			if seen[f] {
				return f, true
			}
			seen[f] = true
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}

// knownKey is the row field k names (case-insensitively), "" for none.
func knownKey(k string) string {
	for _, name := range rowKeys {
		if strings.EqualFold(k, name) {
			return name
		}
	}
	return ""
}
