package loadgen

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type gotEvent struct {
	Name, Data, Comment string
	HasData             bool
}

// parseAll feeds the pieces one by one and flushes.
func parseAll(t testing.TB, pieces ...[]byte) ([]gotEvent, error) {
	t.Helper()
	var p sseParser
	var out []gotEvent
	emit := func(ev *sseEvent) bool {
		out = append(out, gotEvent{string(ev.Name), string(ev.Data), string(ev.Comment), ev.HasData})
		return true
	}
	for _, b := range pieces {
		if _, err := p.feed(b, emit); err != nil {
			return out, err
		}
	}
	_, err := p.flush(emit)
	return out, err
}

// referenceSSE is a deliberately naive parser of a whole stream (line
// endings normalised first) to check the incremental one against.
func referenceSSE(in []byte) []gotEvent {
	s := strings.ReplaceAll(string(in), "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	var out []gotEvent
	var cur gotEvent
	pending := false
	dispatch := func() {
		if pending {
			out = append(out, cur)
		}
		cur, pending = gotEvent{}, false
	}
	for _, line := range strings.Split(s, "\n") {
		switch {
		case line == "":
			dispatch()
		case line[0] == ':':
			if cur.Comment == "" {
				cur.Comment = strings.TrimSpace(line[1:])
			}
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "data":
				if cur.HasData {
					cur.Data += "\n"
				}
				cur.Data += value
				cur.HasData, pending = true, true
			case "event":
				cur.Name, pending = value, true
			}
		}
	}
	dispatch()
	return out
}

func TestSSEParser(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []gotEvent
	}{
		{"two events in one read", "data: a\n\ndata: b\n\n", []gotEvent{{Data: "a", HasData: true}, {Data: "b", HasData: true}}},
		{"CRLF and CR", "data: a\r\n\r\ndata: b\r\rdata:c\n\n", []gotEvent{{Data: "a", HasData: true}, {Data: "b", HasData: true}, {Data: "c", HasData: true}}},
		{"comments and keep-alives are not events", ": ping\n\n:\n\ndata: x\n\n", []gotEvent{{Data: "x", HasData: true}}},
		{"multi-line data", "data: a\ndata: b\n\n", []gotEvent{{Data: "a\nb", HasData: true}}},
		{"named error event without data", "event: error\n: Rate limit exceeded\n\n", []gotEvent{{Name: "error", Comment: "Rate limit exceeded"}}},
		{"unknown fields ignored", "id: 7\nretry: 10\nfoo\ndata: z\n\n", []gotEvent{{Data: "z", HasData: true}}},
		{"last event without blank line (flushed)", "data: a\n\ndata: [DONE]", []gotEvent{{Data: "a", HasData: true}, {Data: "[DONE]", HasData: true}}},
		{"empty data line", "data\n\n", []gotEvent{{Data: "", HasData: true}}},
		{"only one space stripped", "data:  two\n\n", []gotEvent{{Data: " two", HasData: true}}},
		{"field names are case-sensitive", "Data: x\n\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseAll(t, []byte(tc.in))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.want, referenceSSE([]byte(tc.in)))
		})
	}
}

func TestSSEParserSplitAnywhere(t *testing.T) {
	t.Parallel()
	in := []byte("data: {\"a\":1}\r\n\r\n: keep-alive\n\nevent: x\ndata: 1\ndata: 2\r\r" +
		"data: [DONE]\n\n")
	want := referenceSSE(in)
	for i := 0; i <= len(in); i++ {
		for j := i; j <= len(in); j++ {
			got, err := parseAll(t, in[:i], in[i:j], in[j:])
			require.NoError(t, err)
			require.Equal(t, want, got, "split at %d,%d", i, j)
		}
	}
}

func TestSSEParserStops(t *testing.T) {
	t.Parallel()
	var p sseParser
	n := 0
	cont, err := p.feed([]byte("data: a\n\ndata: b\n\n"), func(*sseEvent) bool { n++; return false })
	require.NoError(t, err)
	assert.False(t, cont)
	assert.Equal(t, 1, n)
}

func TestSSEParserTooLarge(t *testing.T) {
	t.Parallel()
	var p sseParser
	big := bytes.Repeat([]byte("x"), 1<<20)
	var err error
	for i := 0; i < 20 && err == nil; i++ {
		_, err = p.feed(big, func(*sseEvent) bool { return true })
	}
	require.ErrorIs(t, err, errSSETooLarge)
}

func TestSSEParserAllocatesNothingWhenWarm(t *testing.T) {
	var p sseParser
	in := []byte("data: {\"choices\":[{\"delta\":{\"content\":\" tok\"}}]}\n\n: ka\n\n")
	emit := func(*sseEvent) bool { return true }
	_, _ = p.feed(in, emit)
	allocs := testing.AllocsPerRun(100, func() { _, _ = p.feed(in, emit) })
	assert.Zero(t, allocs)
}

// FuzzSSE checks the incremental parser against the naive one for any
// input split into three reads, and that it never panics.
func FuzzSSE(f *testing.F) {
	for _, s := range []string{"data: a\n\n", "data: a\r\n\r\ndata: b\r\r", ": c\nevent: error\n\n",
		"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]\n\n", "data:\rdata\r\n"} {
		f.Add([]byte(s), uint16(3), uint16(7))
	}
	f.Fuzz(func(t *testing.T, in []byte, a, b uint16) {
		i := int(a) % (len(in) + 1)
		j := i + int(b)%(len(in)-i+1)
		got, err := parseAll(t, in[:i], in[i:j], in[j:])
		require.NoError(t, err)
		require.Equal(t, referenceSSE(in), got)
		var c chunk
		for _, ev := range got {
			c.decode([]byte(ev.Data)) // must not panic on anything
		}
	})
}
