package results

import (
	"errors"
	"fmt"
)

// maxRecordTokens bounds a per-request token count (far beyond any context
// length): OSL 1e300 is a broken file, not a request.
const maxRecordTokens = 1 << 31

// signedRecord marks the per-request metrics that may be negative: the OSL
// mismatch; the send lag of a request sent before its intended time (with
// the latencies measured from that time); and what ComputeMetrics derives
// from chunk times that go backwards (time_to_second_token, ITL and its
// inverse), which AIPerf computes the same way. Request latency, TTFT and
// the token counts are never negative.
var signedRecord = [numRecordMetrics]bool{idOSLMismatch: true, idSendLag: true,
	idTTFTFromIntended: true, idLatencyIntended: true, idTTST: true, idITL: true, idOTPU: true}

// recordUnits is each scalar per-request metric's unit, from defs.
var recordUnits = func() (u [numRecordMetrics]string) {
	for id, tag := range recordTags {
		u[id] = defs[defIndex[tag]].Unit
	}
	return u
}()

// checkUnit refuses another unit than the metric's: a time in "s" would
// be read as ms.
func checkUnit(id recordID, unit string) error {
	if want := recordUnits[id]; unit != "" && unit != want {
		return fmt.Errorf("unit %q: want %q", unit, want)
	}
	return nil
}

// checkRecord refuses a record that cannot be a request: a success without
// request_latency (`"metrics": {}`), a negative time or count, a token
// count beyond maxRecordTokens, an end before the start.
func checkRecord(m *RecordMetrics) error {
	if _, ok := m.get(idRequestLatency); !ok && m.Error == nil {
		return &fieldError{"metrics", errors.New("a request without an error has no request_latency")}
	}
	for id, tag := range recordTags {
		v, ok := m.get(recordID(id))
		switch {
		case !ok:
		case v < 0 && !signedRecord[id]:
			return &fieldError{"metrics." + tag, fmt.Errorf("negative value %v", v)}
		case recordUnits[id] == "tokens" && v > maxRecordTokens:
			return &fieldError{"metrics." + tag, fmt.Errorf("value %v tokens is beyond %d", v, maxRecordTokens)}
		}
	}
	if start, end := m.Meta.RequestStartNs, m.Meta.RequestEndNs; start > 0 && end > 0 && end < start {
		return &fieldError{"metadata.request_end_ns", fmt.Errorf("%d is before request_start_ns %d", end, start)}
	}
	return nil
}
