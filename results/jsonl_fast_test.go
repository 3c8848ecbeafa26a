package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/simbench/simbench/internal/jsonlex"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// genRecords returns n deterministic records shaped like a simulator run:
// ~chunks content chunks (some carrying several tokens), usage, sim detail
// with a TTFT breakdown, and every 25th request failed.
func genRecords(n, chunks int) []Record {
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	out := make([]Record, n)
	for i := range out {
		out[i] = genRecord(rng, i, chunks)
	}
	return out
}

func genRecord(rng *rand.Rand, i, chunks int) Record {
	start := int64(1_762_551_534_797_067_827) + int64(i)*37_000_000
	r := Record{ID: fmt.Sprintf("req-%08x", rng.Uint32()), SessionNum: i, TraceRow: i,
		ConversationID: fmt.Sprintf("conv-%d", i/4), CorrelationID: fmt.Sprintf("corr-%d", i/4),
		Turn: i % 4, Worker: fmt.Sprintf("w%d", i%3), IntendedNs: start - rng.Int64N(1e6),
		StartNs: start, AckNs: start + 2e6, InputTokens: 100 + rng.IntN(4000),
		RequestedOutputTokens: chunks + 10}
	if i%25 == 24 {
		r.Error = &ErrorDetails{Code: 500, Type: "ServerError", Message: `upstream "x" failed`}
		r.EndNs = start + 5e6
		return r
	}
	t := start + 30e6 + rng.Int64N(20e6)
	for range chunks {
		tok := 1
		if rng.IntN(8) == 0 {
			tok = 2 + rng.IntN(3)
		}
		r.Chunks = append(r.Chunks, Chunk{AtNs: t, Tokens: tok})
		r.OutputTokens += tok
		t += 15e6 + rng.Int64N(6e6)
	}
	r.EndNs = t
	r.Usage = &Usage{PromptTokens: r.InputTokens, CompletionTokens: r.OutputTokens,
		TotalTokens: r.InputTokens + r.OutputTokens}
	r.Sim = &SimDetail{QueueWaitNs: rng.Int64N(1e7), PrefillStartNs: start + 1e6,
		PrefillEndNs: start + 29e6, CachedTokens: rng.IntN(100), Preemptions: i % 2,
		TTFTBreakdown: []Stage{{"queue", 1e6}, {"prefill", 28e6}, {"decode", 1e6}}}
	return r
}

func writeJSONL(recs []Record) []byte {
	var b []byte
	for i := range recs {
		m := ComputeMetrics(&recs[i])
		b = AppendJSONL(b, &m)
	}
	return b
}

// writtenLines are lines JSONLWriter produces, including Other metrics and
// an error with error_isl.
func writtenLines() []string {
	b := writeJSONL(genRecords(30, 12))
	m := ComputeMetrics(&Record{StartNs: 1, EndNs: 9, InputTokens: 3,
		Chunks: []Chunk{{AtNs: 5, Tokens: 2}, {AtNs: 8, Tokens: 1}}, OutputTokens: 3})
	m.Other = []NamedValue{{Tag: "a_list", Unit: "ms", List: []float64{1.5, -2}, IsList: true},
		{Tag: "prefill_throughput", Unit: "tokens/sec", Value: 12.5}}
	b = AppendJSONL(b, &m)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func fixtureLines(tb testing.TB) []string {
	b, err := os.ReadFile(fixtureJSONL)
	require.NoError(tb, err)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// acceptedLines must all take the fast path.
var acceptedLines = []string{
	`{"metadata":{},"metrics":{}}`,
	` { "metadata" : { "session_num" : 3 , "turn_index":1 } , "metrics" : {} } ` + "\t",
	`{"error": null, "metadata": {"session_num": 0, "x_request_id": null, "conversation_id": null, "was_cancelled": true, "cancellation_time_ns": null, "request_ack_ns": -0}, "metrics": {}}`,
	`{"trace_data": {"a": [1, {"b": "c\"\\\u00e9"}, null, true, false, -1.5e-3], "d": {}}, "metadata": {"session_num": 7, "extra": {"x": [[]]}}, "metrics": {"time_to_first_token": {"unit": "ms", "value": 31.7}}}`,
	`{"metadata":{"session_num":1,"x_request_id":"a\"b\u00e9\\n","worker_id":"wörker"},"metrics":{"zz":{"value":1,"unit":"ms"},"aa":{"value":[1,null,2e2],"unit":"u\tnit"},"mm":{"value":null,"unit":"x"},"inter_chunk_latency":{"value":[],"unit":"ms"},"token_gap":{"value":[0,-0,1.25]}}}`,
	`{"metadata":{"session_num":1},"metrics":{"inter_chunk_latency":{"value":7,"unit":"ms"},"time_to_first_token":{"value":[1,2],"unit":"ms"},"error_isl":{"value":12.7,"unit":"tokens"},"request_latency":null}}`,
	`{"metadata":{"session_num":2},"error":{"code":499,"type":"CancelledError","message":"m","cause":{"x":[1,2]},"details":null},"metrics":{"error_isl":{"value":40,"unit":"tokens"}}}`,
	`{"metadata":{"session_num":2},"simbench":{"trace_row":-1,"usage":null,"sim":{"ttft_breakdown":[null,{"stage":"q","ns":5,"x":1}],"queue_wait_ns":1},"future":"x"},"metrics":{}}`,
	`{"metadata":{"session_num":2},"simbench":{"trace_row":3,"usage":{"prompt_tokens":1,"reasoning_tokens":2},"sim":{"ttft_breakdown":[]}},"metrics":{}}`,
	`{"metadata":{},"simbench":{"chunk_ns":[0, -5,null,9223372036854775807 ]},"x":{"chunk_ns":[1.5]},"metrics":{}}`,
	`{"metadata":{},"simbench":{"chunk_ns":[]},"metrics":{}}`,
	`{"metadata":{},"simbench":{"chunk_ns":null},"metrics":{}}`,
	`{"metadata":{"session_num":9223372036854775807,"request_start_ns":-9223372036854775808},"metrics":{"x":{"value":1e-400},"y":{"value":0.1,"unit":null}}}`,
	`{"metadata":{},"metrics":{"a":{"value":-0},"b":{"value":[-0.0, 0.30000000000000004, 123456789012345678901234, 9007199254740993, 1E+2, 0.0000000000000000000001]},"c":{"value":-1.5e-3}}}`,
	"{\"metadata\":{\"x_request_id\":\"\xff\xfe\"},\"metrics\":{\"t\xc3\xa9\":{\"value\":1,\"unit\":\"\xed\xa0\x80\"}}}",
	`{"metadata":{},"x":1,"x":2,"metrics":{"x":{"value":1,"foo":1,"foo":2}}}`,
	`{"trace_data": {"k\u00e9y": {"\"q\"" : [1, {}], "": "\/"}}, "metadata": {}, "error": {"type": "E", "details": {"\n": null}},"metrics":{}}`,
}

func TestFastJSONLAccepts(t *testing.T) {
	lines := append(append(fixtureLines(t), writtenLines()...), acceptedLines...)
	for i, line := range lines {
		want, err := parseJSONLSlow([]byte(line))
		require.NoError(t, err, "line %d: %s", i, line)
		got, ok := parseFast([]byte(line))
		require.True(t, ok, "line %d fell back: %s", i, line)
		requireSame(t, want, got, line)
	}
}

// requireSame is require.Equal plus the sign of zeros, which
// reflect.DeepEqual does not see.
func requireSame(t *testing.T, want, got RecordMetrics, line string) {
	t.Helper()
	require.Equal(t, want, got, "%q", line)
	require.Equal(t, floatBits(&want), floatBits(&got), "float bits of %q", line)
}

func floatBits(m *RecordMetrics) []uint64 {
	var out []uint64
	add := func(vs ...float64) {
		for _, v := range vs {
			out = append(out, math.Float64bits(v))
		}
	}
	add(m.values[:]...)
	add(m.ICL...)
	add(m.TokenGap...)
	for _, o := range m.Other {
		add(o.Value)
		add(o.List...)
	}
	return out
}

func TestFastJSONLFallsBack(t *testing.T) {
	for _, line := range []string{
		``, `null`, `[]`, `{}`, `{"metadata":null}`, `{"metrics":{}}`, `{"metadata":{}}`, `{"metadata":{},"metrics":null}`,
		`{"metadata":{}} x`, `{"metadata":{},}`, `{"metadata":{}`, `{"metadata":{"session_num":01}}`,
		`{"metadata":{},"metadata":{"session_num":1}}`,
		`{"Metadata":{}}`, `{"metadata":{"Session_Num":1}}`, `{"metadata":{"ſession_num":1}}`,
		`{"\u006detadata":{}}`, `{"metadata":{"session_num":1.0}}`, `{"metadata":{"session_num":"1"}}`,
		`{"metadata":{"session_num":1e2}}`, `{"metadata":{"session_num":9223372036854775808}}`,
		`{"metadata":{"request_end_ns":-9223372036854775809}}`, `{"metadata":{"turn_index":-}}`,
		`{"metadata":{},"metrics":{"x":{"value":[1e400null]}}}`, `{"metadata":{},"metrics":{"x":{"value":[1,]}}}`,
		`{"metadata":{},"metrics":{"x":{"value":1.}}}`, `{"metadata":{},"metrics":{"x":{"value":-01}}}`,
		`{"metadata":{"was_cancelled":0}}`, `{"metadata":{"worker_id":5}}`,
		`{"metadata":{},"metrics":{"a":{"value":1},"a":{"value":null}}}`,
		`{"metadata":{},"metrics":{"request_latency":{"value":1},"request_latency":{"value":2}}}`,
		`{"metadata":{},"metrics":{"inter_chunk_latency":{"value":[1,-2]}}}`,
		`{"metadata":{},"metrics":{"token_gap":{"value":[-1e-9]}}}`,
		`{"metadata":{},"metrics":{"request_latency":{"value":1e400}}}`,
		`{"metadata":{},"metrics":{"request_latency":{"value":"1"}}}`,
		`{"metadata":{},"metrics":{"request_latency":{"Value":1}}}`,
		`{"metadata":{},"metrics":{"x":{"value":[1,"2"]}}}`, `{"metadata":{},"metrics":{"x":5}}`,
		`{"metadata":{},"metrics":{"x":{"unit":5}}}`, `{"metadata":{},"metrics":{"x\u0041":{"value":1}}}`,
		"{\"metadata\":{},\"metrics\":{\"\xff\":{\"value\":1}}}",
		`{"metadata":{},"error":"boom"}`, `{"metadata":{},"error":{"code":"500"}}`,
		`{"metadata":{},"simbench":{"sim":{"ttft_breakdown":[1]}}}`,
		`{"metadata":{},"simbench":{"chunk_ns":[1.5]}}`, `{"metadata":{},"simbench":{"chunk_ns":[1e3]}}`,
		`{"metadata":{},"simbench":{"chunk_ns":["1"]}}`, `{"metadata":{},"simbench":{"chunk_ns":5}}`,
		`{"metadata":{},"simbench":{"chunk_ns":[9223372036854775808]}}`, `{"metadata":{},"simbench":{"chunk_ns":[1,]}}`,
		`{"metadata":{},"x":"\q"}`, `{"metadata":{},"x":` + strings.Repeat("[", jsonlex.MaxDepth) + strings.Repeat("]", jsonlex.MaxDepth) + `}`,
	} {
		_, ok := parseFast([]byte(line))
		assert.False(t, ok, "fast path accepted %s", line)
		want, wantErr := parseJSONLSlow([]byte(line))
		got, err := parseJSONLLine([]byte(line), &slab{})
		assert.Equal(t, want, got, line)
		assert.Equal(t, wantErr, err, line)
	}
}

// TestFastKeyTables: the member tables list the json names of each struct in
// field order, so the index constants name the right fields.
func TestFastKeyTables(t *testing.T) {
	for _, c := range []struct {
		table jsonlex.Names
		typ   any
	}{
		{topKeys, jsonlLine{}}, {metadataKeys, Metadata{}}, {errorKeys, ErrorDetails{}},
		{metricKeys, jsonMetricValue{}}, {extKeys, Extension{}}, {usageKeys, Usage{}},
		{simKeys, SimDetail{}}, {stageKeys, Stage{}},
	} {
		typ := reflect.TypeOf(c.typ)
		var names []string
		for f := range typ.Fields() {
			names = append(names, strings.Split(f.Tag.Get("json"), ",")[0])
		}
		assert.Equal(t, names, []string(c.table), typ.Name())
	}
}

// FuzzFastJSONL: whenever the fast path accepts a line, encoding/json
// accepts it too and decodes the same record.
func FuzzFastJSONL(f *testing.F) {
	for _, line := range fixtureLines(f) {
		f.Add(line)
	}
	for _, line := range writtenLines() {
		f.Add(line)
	}
	for _, line := range acceptedLines {
		f.Add(line)
	}
	g := newLineGen(7, 8)
	for range 50 {
		f.Add(g.line())
	}
	f.Fuzz(func(t *testing.T, line string) { checkFastLine(t, line) })
}

// BenchmarkReadJSONL reads 10k records the way JSONLReader does, with the
// fast path and with encoding/json only: simbench's compact lines of ~100
// chunks each, and AIPerf's fixture lines (", " separators) repeated.
func BenchmarkReadJSONL(b *testing.B) {
	inputs := []struct {
		name string
		data []byte
	}{
		{"simbench", writeJSONL(genRecords(10_000, 100))},
		{"aiperf", bytes.Repeat([]byte(strings.Join(fixtureLines(b), "\n")+"\n"), 1000)},
	}
	var sl slab // as a JSONLReader holds one
	parsers := []struct {
		name  string
		parse func([]byte) (RecordMetrics, error)
	}{{"fast", func(b []byte) (RecordMetrics, error) { return parseJSONLLine(b, &sl) }}, {"slow", parseJSONLSlow}}
	for _, in := range inputs {
		want := bytes.Count(in.data, []byte("\n"))
		for _, p := range parsers {
			b.Run(in.name+"/"+p.name, func(b *testing.B) {
				b.SetBytes(int64(len(in.data)))
				b.ReportAllocs()
				for b.Loop() {
					if n := readLines(b, in.data, p.parse); n != want {
						b.Fatalf("read %d records, want %d", n, want)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*want), "ns/record")
			})
		}
	}
}

// readLines is JSONLReader.Next's loop with the parser as a parameter.
func readLines(b *testing.B, data []byte, parse func([]byte) (RecordMetrics, error)) int {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<30)
	var rec RecordMetrics
	n := 0
	for sc.Scan() {
		m, err := parse(sc.Bytes())
		if err != nil {
			b.Fatal(err)
		}
		rec = m
		n++
	}
	if !rec.Valid() && rec.Error == nil {
		b.Fatal("unreachable: keeps rec alive")
	}
	return n
}

// lineGen writes random JSONL lines over the vocabulary parseFast knows,
// mostly well formed, with the cases it must decode exactly or refuse:
// nulls, wrong types, repeated and case-folded keys, escapes, non-ASCII and
// invalid UTF-8, long and signed numbers, negative gaps, odd whitespace.
type lineGen struct {
	rng *rand.Rand
	b   []byte
}

func newLineGen(s1, s2 uint64) *lineGen { return &lineGen{rng: rand.New(rand.NewPCG(s1, s2))} }

// one is true with probability 1/n.
func (g *lineGen) one(n int) bool { return g.rng.IntN(n) == 0 }

// bad is true when a value should be one parseFast refuses: rare enough for
// a good share of the lines to take the fast path.
func (g *lineGen) bad() bool { return g.one(150) }

func (g *lineGen) pick(s ...string) string { return s[g.rng.IntN(len(s))] }

func (g *lineGen) put(s string) { g.b = append(g.b, s...) }

func (g *lineGen) ws() {
	if g.one(4) {
		g.put(g.pick(" ", "  ", "\t", "\n", "\r\n "))
	}
}

func (g *lineGen) sep(c string) {
	g.ws()
	g.put(c)
	g.ws()
}

func (g *lineGen) line() string {
	g.b = g.b[:0]
	g.ws()
	g.object([]string{"metadata", "metrics", "error", "simbench"}, func(k string) {
		switch k {
		case "metadata":
			g.orNull(50, g.metadata)
		case "metrics":
			g.orNull(20, g.metrics)
		case "error":
			g.orNull(2, g.errorObj)
		case "simbench":
			g.orNull(5, g.extension)
		}
	})
	g.ws()
	return string(g.b)
}

func (g *lineGen) orNull(n int, val func()) {
	if g.one(n) {
		g.put("null")
		return
	}
	val()
}

// object writes a random subset of keys in random order, now and then with
// a repeated key, a key in another case or escaped, and unknown members.
func (g *lineGen) object(keys []string, val func(k string)) { g.members(keys, true, val) }

// extraKey stands for an unknown member in members' key list.
const extraKey = "\x00"

// members is object; a map's members (extras false) are all written by val.
func (g *lineGen) members(keys []string, extras bool, val func(k string)) {
	var ks []string
	for _, i := range g.rng.Perm(len(keys)) {
		if !g.one(4) || (keys[i] == "metadata" && !g.bad()) {
			ks = append(ks, keys[i])
		}
	}
	if len(ks) > 0 && g.bad() {
		ks = append(ks, ks[g.rng.IntN(len(ks))])
	}
	if extras && g.one(4) {
		ks = slices.Insert(ks, g.rng.IntN(len(ks)+1), extraKey)
	}
	g.put("{")
	for i, k := range ks {
		if i > 0 {
			g.sep(",")
		}
		g.key(k)
		g.sep(":")
		if k == extraKey {
			g.anyValue(0)
		} else {
			val(k)
		}
	}
	g.ws()
	g.put("}")
}

func (g *lineGen) key(k string) {
	switch {
	case k == extraKey && g.bad():
		g.str(g.pick("ſession_num", "VALUE", "Unit", "\\u0075nit"))
		return
	case k == extraKey:
		g.str(g.pick("trace_data", "cause", "x", "", "k\\u00e9y", "unit_", "valu"))
		return
	case k == "":
	case g.bad():
		k = strings.ToUpper(k[:1]) + k[1:]
	case g.bad():
		k = fmt.Sprintf("\\u%04x", k[0]) + k[1:]
	}
	g.put(`"` + k + `"`)
}

func (g *lineGen) str(s string) { g.put(`"` + s + `"`) }

func (g *lineGen) stringVal() {
	switch {
	case g.one(12):
		g.put("null")
	case g.one(12):
		g.put(g.pick(`"a\"b\\c\/\n"`, `"\u00e9\ud800x"`, `"\t"`))
	case g.one(12):
		g.put(g.pick("\"w\xc3\xb6rker\"", "\"\xff\xfe\"", "\"\xed\xa0\x80\"", `"€"`))
	case g.bad():
		g.put(g.pick("5", "true", "[]", "{}"))
	default:
		g.str(g.pick("", "ms", "tokens", "simbench", "profiling", "warmup", "w-1", "req-0001"))
	}
}

func (g *lineGen) intVal() {
	switch {
	case g.one(14):
		g.put("null")
	case g.one(14):
		g.put(g.pick("-0", "9223372036854775807", "-9223372036854775808", "1762551534797067827"))
	case g.bad():
		g.put(g.pick("1.0", "1e2", `"1"`, "true", "-", "01", "1.", "[1]",
			"9223372036854775808", "-9223372036854775809", "99999999999999999999"))
	default:
		g.put(strconv.FormatInt(g.rng.Int64N(1e6)-1e3, 10))
	}
}

func (g *lineGen) boolVal() {
	if g.bad() {
		g.put(g.pick("0", `"true"`, "nul"))
		return
	}
	g.put(g.pick("true", "false", "null"))
}

// number writes a JSON number of many shapes or, rarely, something else
// or a negative number (which makes a gap list fall back).
func (g *lineGen) number() { g.numberOrBad(g.bad()) }

func (g *lineGen) numberOrBad(bad bool) {
	if bad && g.one(2) {
		g.put("-")
	}
	digits := strconv.FormatUint(g.rng.Uint64()>>g.rng.IntN(64), 10)
	switch {
	case g.one(12):
		g.put(g.pick("0", "0.0", "1e-400", "1.5E+3", "2e-5", "0.30000000000000004",
			"9007199254740993", "18.349401999999998", "123456789012345678901234.5"))
	case bad:
		g.put(g.pick(`"1"`, "true", "{}", "01", ".5", "1.", "1e", "--1", "NaN", "1e400"))
	case g.one(12):
		g.put("0.0000" + digits)
	default:
		if p := g.rng.IntN(len(digits) + 1); p > 0 && p < len(digits) {
			digits = digits[:p] + "." + digits[p:]
		}
		g.put(digits)
		if g.one(30) {
			g.put(g.pick("e5", "E-3", "e+20", "e0"))
		}
	}
}

func (g *lineGen) list() {
	g.put("[")
	n := g.rng.IntN(6)
	if g.one(10) {
		n = 200
	}
	bad := -1
	if g.bad() {
		bad = g.rng.IntN(n + 1)
	}
	for i := range n {
		if i > 0 {
			g.sep(",")
		}
		if g.one(50) {
			g.put("null")
		} else {
			g.numberOrBad(i == bad)
		}
	}
	g.ws()
	g.put("]")
}

func (g *lineGen) metadata() {
	g.object(metadataKeys, func(k string) {
		switch {
		case k == "was_cancelled":
			g.boolVal()
		case strings.HasSuffix(k, "_id") || k == "benchmark_phase":
			g.stringVal()
		default:
			g.intVal()
		}
	})
}

var genTags = append(append([]string(nil), recordTags[:]...),
	TagICL, TagICL, TagTokenGap, TagTokenGap, TagErrorISL, "prefill_throughput", "zz", "aa", "", "t\xc3\xa9")

func (g *lineGen) metrics() {
	g.members(g.someTags(), false, func(tag string) {
		switch {
		case g.one(30):
			g.put("null")
			return
		case g.bad():
			g.put(g.pick("5", "[]", `"x"`))
			return
		}
		g.object(metricKeys, func(k string) {
			if id, ok := recordIndex[tag]; ok && k == "unit" && !g.one(8) {
				g.put(`"` + recordUnits[id] + `"`) // mostly a known metric's own unit: another is refused on both paths
				return
			}
			if k == "unit" {
				g.stringVal()
				return
			}
			switch g.rng.IntN(5) {
			case 0:
				g.list()
			case 1:
				g.orNull(2, g.list)
			default:
				g.orNull(20, g.number)
			}
		})
	})
}

// someTags picks metric tags for one line; object then keeps a subset.
func (g *lineGen) someTags() []string {
	var tags []string
	for _, i := range g.rng.Perm(len(genTags)) {
		if !slices.Contains(tags, genTags[i]) && g.one(2) {
			tags = append(tags, genTags[i])
		}
	}
	return tags
}

func (g *lineGen) errorObj() {
	g.object(errorKeys, func(k string) {
		if k == "code" {
			g.intVal()
		} else {
			g.stringVal()
		}
	})
}

func (g *lineGen) extension() {
	g.object(extKeys, func(k string) {
		switch k {
		case "worker":
			g.stringVal()
		case "usage":
			g.orNull(4, func() { g.object(usageKeys, func(string) { g.intVal() }) })
		case "sim":
			g.orNull(4, g.sim)
		case "chunk_ns":
			g.orNull(4, g.intList)
		default:
			g.intVal()
		}
	})
}

// intList writes a list of integers (chunk_ns), with the odd null element
// and, rarely, one that is not an integer.
func (g *lineGen) intList() {
	g.put("[")
	for i := range g.rng.IntN(5) {
		if i > 0 {
			g.sep(",")
		}
		g.intVal()
	}
	g.ws()
	g.put("]")
}

func (g *lineGen) sim() {
	g.object(simKeys, func(k string) {
		if k == "prefill_worker" || k == "decode_worker" {
			g.stringVal()
			return
		}
		if k != "ttft_breakdown" {
			g.intVal()
			return
		}
		g.orNull(5, func() {
			g.put("[")
			for i := range g.rng.IntN(4) {
				if i > 0 {
					g.sep(",")
				}
				g.orNull(6, g.stage)
			}
			g.put("]")
		})
	})
}

func (g *lineGen) stage() {
	g.object(stageKeys, func(k string) {
		if k == "stage" {
			g.stringVal()
		} else {
			g.intVal()
		}
	})
}

// anyValue writes an arbitrary value, as an unknown member would hold.
func (g *lineGen) anyValue(depth int) {
	switch n := g.rng.IntN(7); {
	case depth < 3 && n == 0:
		g.put("[")
		for i := range g.rng.IntN(3) {
			if i > 0 {
				g.sep(",")
			}
			g.anyValue(depth + 1)
		}
		g.put("]")
	case depth < 3 && n == 1:
		g.object([]string{"a", "b"}, func(string) { g.anyValue(depth + 1) })
	case n == 2:
		g.stringVal()
	case n == 3:
		g.boolVal()
	default:
		g.number()
	}
}

// checkFastLine fails t when the fast path accepts line and decodes it
// otherwise than encoding/json; it reports whether the fast path accepted.
func checkFastLine(t *testing.T, line string) bool {
	t.Helper()
	got, ok := parseFast([]byte(line))
	if !ok {
		return false
	}
	want, err := parseJSONLSlow([]byte(line))
	require.NoError(t, err, "fast path accepted a line encoding/json rejects: %q", line)
	requireSame(t, want, got, line)
	inSlab, ok := parseFastIn([]byte(line), &slab{f: make([]float64, slabLen-3, slabLen)})
	require.True(t, ok, "%q", line)
	requireSame(t, want, inSlab, line)
	return true
}

// TestJSONLReaderSlab: records read through one reader, their lists carved
// from shared slabs across many renewals, equal encoding/json's decoding of
// each line (overlapping lists would have overwritten earlier records).
func TestJSONLReaderSlab(t *testing.T) {
	data := writeJSONL(genRecords(600, 40))
	got, err := ReadJSONL(bytes.NewReader(data), "slab")
	require.NoError(t, err)
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	require.Len(t, got, len(lines))
	for i, line := range lines {
		want, err := parseJSONLSlow(line)
		require.NoError(t, err)
		requireSame(t, want, got[i], string(line))
	}
}

// TestFastJSONLGenerated compares both paths on generated lines; enough of
// them must take the fast path (and enough not) for the test to mean
// something.
func TestFastJSONLGenerated(t *testing.T) {
	g := newLineGen(5, 6)
	const n = 3000
	accepted := 0
	for range n {
		if checkFastLine(t, g.line()) {
			accepted++
		}
	}
	t.Logf("fast path took %d of %d generated lines", accepted, n)
	assert.Greater(t, accepted, n/10)
	assert.Less(t, accepted, n*9/10)
}

// FuzzFastJSONLGen is FuzzFastJSONL over generated lines: the fuzzer
// explores generator seeds, so most lines are well formed.
func FuzzFastJSONLGen(f *testing.F) {
	f.Add(uint64(1), uint64(2))
	f.Fuzz(func(t *testing.T, s1, s2 uint64) {
		g := newLineGen(s1, s2)
		for range 20 {
			checkFastLine(t, g.line())
		}
	})
}

// TestAppendStringAsJSON: appendString writes what encoding/json writes.
func TestAppendStringAsJSON(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "time_to_first_token", "ms", "0b1c-2d", `a"b`, `a\b`, "a<b>&c", "tab\there", "\x00", "é", "\u2028", "日本", "\xff"} {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(appendString([]byte("x"), s))[1:], "%q", s)
	}
}

// BenchmarkAppendJSONL is the cost of one record's JSONL line.
func BenchmarkAppendJSONL(b *testing.B) {
	rec := &Record{ID: "3f1c2a9e-0d4b-4e6f-9a1b-2c3d4e5f6a7b", SessionNum: 7, StartNs: 1e18, AckNs: 1e18 + 1e6, EndNs: 1e18 + 6e8,
		IntendedNs: 1e18, InputTokens: 100, RequestedOutputTokens: 50}
	for k := range 50 {
		rec.Chunks = append(rec.Chunks, Chunk{AtNs: 1e18 + 2e7 + int64(k)*1e7, Tokens: 1})
	}
	m := ComputeMetrics(rec)
	b.ReportAllocs()
	var buf []byte
	for range b.N {
		buf = AppendJSONL(buf[:0], &m)
	}
}
