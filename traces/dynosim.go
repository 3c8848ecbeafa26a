package traces

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// Trace formats a workload file may be in (Spec.TraceFormat).
const (
	FormatMooncake        = "mooncake"         // Mooncake JSONL (ReadMooncake)
	FormatAgenticMooncake = "agentic_mooncake" // DynoSim's agentic Mooncake rows (ReadAgenticMooncake)
)

// TraceFormats lists the formats LoadTrace reads.
var TraceFormats = []string{FormatMooncake, FormatAgenticMooncake, FormatAIPerfDAG}

// LoadTrace reads a trace file in format ("" is Mooncake) whose hash_ids
// are blocks of blockSize tokens.
func LoadTrace(path, format string, blockSize int) (*Workload, []Warning, error) {
	read, err := traceReader(format)
	if err != nil {
		return nil, nil, err
	}
	f, err := openTrace(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return read(f, path, blockSize)
}

func traceReader(format string) (func(io.Reader, string, int) (*Workload, []Warning, error), error) {
	switch format {
	case "", FormatMooncake:
		return ReadMooncakeBlocks, nil
	case FormatAgenticMooncake:
		return ReadAgenticMooncake, nil
	case FormatAIPerfDAG:
		return ReadAIPerfDAG, nil
	}
	return nil, specErrorf("--trace-format %q: want one of %v", format, TraceFormats)
}

// agenticRow is the members of an agentic Mooncake row beyond Mooncake's.
type agenticRow struct {
	RequestID   json.RawMessage   `json:"request_id"`
	WaitFor     []json.RawMessage `json:"wait_for"`
	Branches    []json.RawMessage `json:"branches"`
	PrefixReset *bool             `json:"prefix_reset"`
	ToolWaitMs  json.RawMessage   `json:"tool_wait_ms"`
}

// ReadAgenticMooncake reads DynoSim's agentic_mooncake trace: Mooncake rows
// (timestamp, input_length, output_length, hash_ids of blockSize tokens,
// delay) with a unique request_id and optional dependencies:
//   - wait_for (request ids of earlier rows): the row is sent when every
//     request it names has completed, plus delay + tool_wait_ms (ms); its
//     timestamp is then ignored (a warning says so).
//   - a row without wait_for starts at its timestamp (or closed loop
//     without one) and roots a session of its own, named by its
//     request_id; the rows depending on it, directly or not, are that
//     session's later turns (a DAG: Request.Parents). A row waiting for
//     requests of two sessions is refused (simbench's sessions have one
//     root). session_id only names the trajectory and is not used.
//   - branches (request ids) records the children a row spawns: each must
//     be a row of the file. prefix_reset marks a trajectory's first row;
//     both are informational.
//
// Errors name the file, line and field.
func ReadAgenticMooncake(r io.Reader, name string, blockSize int) (*Workload, []Warning, error) {
	if blockSize < 1 {
		return nil, nil, fmt.Errorf("%s: hash block size must be > 0, got %d", name, blockSize)
	}
	rd := &agenticReader{file: name, blockSize: blockSize, ids: map[string]int{}, turns: map[string]int{}}
	if err := scanRows(r, name, rd.add); err != nil {
		return nil, nil, err
	}
	if len(rd.reqs) == 0 {
		return nil, nil, fmt.Errorf("%s: no requests in trace", name)
	}
	if err := rd.checkBranches(); err != nil {
		return nil, nil, err
	}
	return &Workload{Requests: rd.reqs, BlockSize: blockSize, Source: name, Digest: ComputeDigest(rd.reqs)},
		rd.warnings(), nil
}

type agenticReader struct {
	file                 string
	blockSize            int
	reqs                 []Request
	ids                  map[string]int // request_id → index
	turns                map[string]int // session → turns so far
	branches             []branchRef
	timedDeps, rootDelay summary
}

// branchRef is a branches entry to check once every row is read.
type branchRef struct {
	line int
	id   string
}

func (rd *agenticReader) add(line []byte, lineNo int) error {
	fail := func(field, format string, args ...any) error {
		return &RowError{File: rd.file, Line: lineNo, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	req, missingOutput, err := parseRowSlow(line, rd.file, lineNo, rd.blockSize)
	if err != nil {
		return err
	}
	if missingOutput {
		return fail("output_length", "missing: an agentic_mooncake row gives its output length")
	}
	var ag agenticRow
	if err := json.Unmarshal(line, &ag); err != nil {
		return decodeError(err, fail)
	}
	id, err := idText(ag.RequestID, "request_id", fail)
	if err != nil || id == "" {
		return cmpErr(err, fail("request_id", "missing: every agentic_mooncake row names its request"))
	}
	if _, dup := rd.ids[id]; dup {
		return fail("request_id", "%q is on line %d already", id, rd.reqs[rd.ids[id]].Line)
	}
	toolWait := 0.0
	if v := nonNull(ag.ToolWaitMs); v != nil {
		if toolWait, err = nonNegFloat(v, "tool_wait_ms", fail); err != nil {
			return err
		}
	}
	if err := rd.link(&req, id, ag.WaitFor, toolWait, lineNo, fail); err != nil {
		return err
	}
	for _, b := range ag.Branches {
		bid, err := idText(b, "branches", fail)
		if err != nil {
			return err
		}
		rd.branches = append(rd.branches, branchRef{lineNo, bid})
	}
	req.Row, req.Line = len(rd.reqs), lineNo
	rd.ids[id] = req.Row
	rd.reqs = append(rd.reqs, req)
	return nil
}

// cmpErr returns err when there is one, else alt.
func cmpErr(err, alt error) error {
	if err != nil {
		return err
	}
	return alt
}

// link makes req, request id, a root (no wait_for) or a later turn of its
// parents' session.
func (rd *agenticReader) link(req *Request, id string, waitFor []json.RawMessage, toolWait float64, lineNo int, fail failFunc) error {
	if len(waitFor) == 0 {
		if req.DelayMs > 0 || toolWait > 0 {
			rd.rootDelay.note(lineNo, "")
		}
		req.SessionID, req.Turn, req.Parents, req.DelayMs = id, 0, nil, 0
		rd.turns[id] = 1
		return nil
	}
	session := ""
	var parents []int
	for _, raw := range waitFor {
		pid, err := idText(raw, "wait_for", fail)
		if err != nil {
			return err
		}
		i, ok := rd.ids[pid]
		if !ok {
			return fail("wait_for", "names request %q, which no earlier row has (rows come after the requests they wait for)", pid)
		}
		p := &rd.reqs[i]
		if session != "" && p.SessionID != session {
			return fail("wait_for", "waits for requests of two sessions (rooted at %q and %q); a session has one root", session, p.SessionID)
		}
		session = p.SessionID
		if slices.Contains(parents, p.Turn) {
			return fail("wait_for", "names request %q twice", pid)
		}
		parents = append(parents, p.Turn)
	}
	slices.Sort(parents)
	if req.HasTimestamp {
		rd.timedDeps.note(lineNo, "")
	}
	req.TimestampMs, req.HasTimestamp = 0, false
	req.SessionID, req.Parents, req.DelayMs = session, parents, req.DelayMs+toolWait
	req.Turn = rd.turns[session]
	rd.turns[session] = req.Turn + 1
	return nil
}

func (rd *agenticReader) checkBranches() error {
	for _, b := range rd.branches {
		if _, ok := rd.ids[b.id]; !ok {
			return &RowError{File: rd.file, Line: b.line, Field: "branches", Msg: fmt.Sprintf("names request %q, which no row has", b.id)}
		}
	}
	return nil
}

func (rd *agenticReader) warnings() []Warning {
	var ws []Warning
	if s := rd.timedDeps; s.count > 0 {
		ws = append(ws, Warning{rd.file, s.first, fmt.Sprintf(
			"%d row(s) with wait_for carry a timestamp, first here; it is ignored: they are sent when the requests they wait for end, plus delay and tool_wait_ms",
			s.count)})
	}
	if s := rd.rootDelay; s.count > 0 {
		ws = append(ws, Warning{rd.file, s.first, fmt.Sprintf(
			"%d row(s) without wait_for carry a delay or tool_wait_ms, first here; there is nothing to wait for, so it is ignored",
			s.count)})
	}
	return ws
}
