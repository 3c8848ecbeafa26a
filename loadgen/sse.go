package loadgen

import (
	"bytes"
	"errors"
)

// sseEvent is one dispatched server-sent event. Its slices point into the
// parser's buffers and are valid only during the callback.
type sseEvent struct {
	Name    []byte // the "event" field, empty for the default "message"
	Data    []byte // data lines joined with "\n"
	Comment []byte // the event's first comment line (after ':'), AIPerf's error text
	HasData bool
}

// errSSETooLarge stops a stream whose single line or event outgrows maxSSEEvent.
var errSSETooLarge = errors.New("SSE event larger than 16 MiB")

const maxSSEEvent = 16 << 20

// sseParser splits a byte stream into events incrementally (the WHATWG
// event-stream rules): lines end in LF, CRLF or CR, even across reads; a
// blank line dispatches the event; "data" lines accumulate; ':' lines are
// comments (keep-alives); unknown fields are ignored. An event is dispatched
// when it has data or an event name, so a bare "event: error" is seen. Its
// buffers are reused, so parsing allocates nothing once warm.
type sseParser struct {
	line    []byte // a line split across reads
	ev      sseEvent
	data    []byte
	name    []byte
	comment []byte
	sawCR   bool // the previous byte ended a line with CR: skip a following LF
	pending bool // the current event has a field
}

// feed parses b and calls emit for each complete event; emit returns false
// to stop. feed returns false when emit stopped it or on an oversized event.
func (p *sseParser) feed(b []byte, emit func(*sseEvent) bool) (bool, error) {
	if len(b) == 0 {
		return true, nil
	}
	if p.sawCR && b[0] == '\n' {
		b = b[1:]
	}
	p.sawCR = false
	for len(b) > 0 {
		i := lineEnd(b)
		if i < 0 {
			if len(p.line)+len(b) > maxSSEEvent {
				return false, errSSETooLarge
			}
			p.line = append(p.line, b...)
			return true, nil
		}
		line := b[:i]
		if len(p.line) > 0 {
			p.line = append(p.line, line...)
			line = p.line
		}
		b = p.skipEOL(b, i)
		cont, err := p.processLine(line, emit)
		p.line = p.line[:0]
		if !cont || err != nil {
			return false, err
		}
	}
	return true, nil
}

// lineEnd is bytes.IndexAny(b, "\r\n") with two vectorised scans.
func lineEnd(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	seg := b
	if i >= 0 {
		seg = b[:i]
	}
	if j := bytes.IndexByte(seg, '\r'); j >= 0 {
		return j
	}
	return i
}

// skipEOL returns b after the line terminator at i.
func (p *sseParser) skipEOL(b []byte, i int) []byte {
	if b[i] == '\r' {
		if i+1 == len(b) {
			p.sawCR = true
			return b[i+1:]
		}
		if b[i+1] == '\n' {
			return b[i+2:]
		}
	}
	return b[i+1:]
}

func (p *sseParser) processLine(line []byte, emit func(*sseEvent) bool) (bool, error) {
	if len(line) == 0 {
		return p.dispatch(emit), nil
	}
	if line[0] == ':' {
		if len(p.comment) == 0 {
			p.comment = append(p.comment, bytes.TrimSpace(line[1:])...)
		}
		return true, nil
	}
	field, value := line, []byte(nil)
	if k := bytes.IndexByte(line, ':'); k >= 0 {
		field, value = line[:k], line[k+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "data":
		if p.ev.HasData {
			p.data = append(p.data, '\n')
		}
		if len(p.data)+len(value) > maxSSEEvent {
			return false, errSSETooLarge
		}
		p.data = append(p.data, value...)
		p.ev.HasData, p.pending = true, true
	case "event":
		p.name = append(p.name[:0], value...)
		p.pending = true
	}
	return true, nil
}

// dispatch emits the current event, if it has data or a name, and resets it.
func (p *sseParser) dispatch(emit func(*sseEvent) bool) bool {
	cont := true
	if p.pending {
		p.ev.Name, p.ev.Data, p.ev.Comment = p.name, p.data, p.comment
		cont = emit(&p.ev)
	}
	p.ev = sseEvent{}
	p.data, p.name, p.comment = p.data[:0], p.name[:0], p.comment[:0]
	p.pending = false
	return cont
}

// flush ends the stream: a last line without terminator is processed and an
// event without its blank line is dispatched (as AIPerf does).
func (p *sseParser) flush(emit func(*sseEvent) bool) (bool, error) {
	if len(p.line) > 0 {
		line := p.line
		cont, err := p.processLine(line, emit)
		p.line = p.line[:0]
		if !cont || err != nil {
			return cont, err
		}
	}
	return p.dispatch(emit), nil
}

// reset clears the parser for a new stream, keeping its buffers.
func (p *sseParser) reset() {
	p.line, p.data, p.name, p.comment = p.line[:0], p.data[:0], p.name[:0], p.comment[:0]
	p.ev, p.sawCR, p.pending = sseEvent{}, false, false
}
