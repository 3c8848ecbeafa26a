package peerruns

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/simbench/simbench/traces"
)

// benchLoad is how a benchmark with per-request lists sent its requests:
// its request rate (infinite: all at once) and its concurrency cap (0:
// none).
type benchLoad struct {
	rate     float64
	infinite bool
	cap      int
}

// readBenchLoad reads request_rate (a number, or "inf" / Infinity) and
// max_concurrency; a rate it cannot read is 0.
func readBenchLoad(top map[string]json.RawMessage) benchLoad {
	var l benchLoad
	s := strings.Trim(strings.TrimSpace(string(top["request_rate"])), `"`)
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		l.rate, l.infinite = v, math.IsInf(v, 1)
	}
	if c, err := strconv.Atoi(strings.TrimSpace(string(top["max_concurrency"]))); err == nil && c > 0 {
		l.cap = c
	}
	return l
}

// listWorkload rebuilds the requests a benchmark with per-request lists
// sent, so that `calibrate --real` can replay it: every request that
// received content, in the lists' order (the order sent), with its prompt
// and output lengths. When the lists record each request's send time
// (vllm's start_times) the requests keep it, under the run's concurrency
// cap; at an infinite rate they were sent at once (a closed loop of the
// cap's size, when there is one); at a finite rate without send times the
// arrivals are not known and no workload is rebuilt. The prompts' texts
// are not recorded: each is taken as unique (no prefix shared).
func (r *Run) listWorkload(tool, path string, l *requestLists, load benchLoad) {
	times := len(l.StartTimes) == len(l.TTFTs) && len(l.StartTimes) > 0
	if !times && !load.infinite {
		r.NoWorkload = fmt.Sprintf("%s per-request lists do not record when each request was sent, and the rate (%g requests/s) does not fix it", tool, load.rate)
		return
	}
	wl := &traces.Workload{BlockSize: traces.MooncakeBlockSize, Concurrency: load.cap}
	first := math.Inf(1)
	for _, t := range l.StartTimes {
		first = min(first, t)
	}
	var nextID int64
	skipped := 0
	for i := range l.TTFTs {
		if l.Errors[i] != "" || l.TTFTs[i] <= 0 && len(l.ITLs[i]) == 0 || l.OutputLens[i] < 1 || l.InputLens[i] < 1 {
			skipped++
			continue
		}
		isl := int(math.Round(l.InputLens[i]))
		req := traces.Request{Row: len(wl.Requests), InputLength: isl, OutputLength: int(math.Round(l.OutputLens[i]))}
		for range (isl + wl.BlockSize - 1) / wl.BlockSize {
			req.HashIDs = append(req.HashIDs, nextID)
			nextID++
		}
		switch {
		case times:
			req.TimestampMs, req.HasTimestamp = math.Round((l.StartTimes[i]-first)*1e6)/1e3, true
		case load.cap == 0:
			req.HasTimestamp = true
		}
		wl.Requests = append(wl.Requests, req)
	}
	if len(wl.Requests) == 0 {
		r.NoWorkload = fmt.Sprintf("no request of %s per-request lists received content", tool)
		return
	}
	wl.Digest = traces.ComputeDigest(wl.Requests)
	wl.Source = fmt.Sprintf("%s per-request lists of %s: %d requests", tool, path, len(wl.Requests))
	r.Workload, r.NoWorkload = wl, ""
	r.note("the workload is the %d requests that received content, with their input and output lengths; %s; each prompt is taken as unique (the file records no text, so no shared prefix)",
		len(wl.Requests), arrivalNote(times, load))
	if skipped > 0 {
		r.note("%d failed request(s) are left out of the workload", skipped)
	}
}

// arrivalNote says how the rebuilt requests arrive.
func arrivalNote(times bool, load benchLoad) string {
	switch {
	case times && load.cap > 0:
		return fmt.Sprintf("each is sent at its recorded start time, at most %d in flight", load.cap)
	case times:
		return "each is sent at its recorded start time"
	case load.cap > 0:
		return fmt.Sprintf("sent at an infinite rate under a cap of %d in flight: a closed loop of %d", load.cap, load.cap)
	}
	return "sent at an infinite rate: all at once"
}
