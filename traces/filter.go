package traces

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Filter describes how Apply reshapes a workload. The zero value keeps
// everything. Steps run in this order:
//
//  1. Window (StartMs/EndMs): keeps sessions whose first turn's timestamp t
//     has StartMs <= t <= EndMs (EndMs 0 = no end), like AIPerf's
//     --fixed-schedule-start-offset/--fixed-schedule-end-offset. It is on
//     when HasWindow is set or either bound is > 0, and needs timestamps.
//  2. Lengths: ScaleLengths multiplies ISL and OSL (rounded, at least 1),
//     then MaxISL and MaxOSL cap them. hash_ids follow the new ISL: the list
//     is truncated or extended to ceil(ISL/BlockSize) blocks, so shared
//     prefixes stay shared as far as they still fit; a block whose token
//     count changes (the new last block, a formerly partial block) gets a
//     fresh id not used in the input, the same one wherever the same block
//     is cut to the same count, and every added block gets a unique fresh
//     id; so no id stands for two different token counts. Requests with a
//     literal TextInput keep their ISL.
//  3. MaxTotalTokens drops every session that has a turn with ISL+OSL above it.
//  4. Limit keeps the first Limit requests, in whole sessions: sessions are
//     taken in order until the next one would not fit.
//  5. Time: with a window start, StartMs becomes time zero; with RebaseTime
//     the earliest remaining timestamp does (AIPerf's
//     --fixed-schedule-auto-offset; not allowed with a window start).
//     Timestamps that would fall below zero become 0. Speedup then divides
//     timestamps and delays (2 = twice as fast).
//
// Whole sessions are always kept or dropped together.
type Filter struct {
	MaxTotalTokens int     // max ISL+OSL of any turn, 0 = off
	StartMs, EndMs float64 // time window, inclusive; EndMs 0 = no end
	HasWindow      bool    // window on even when StartMs = EndMs = 0 (then it only checks timestamps exist)
	Speedup        float64 // timestamps and delays divided by it; 0 or 1 = off
	Limit          int     // keep the first N requests (whole sessions), 0 = off
	MaxISL, MaxOSL int     // caps on ISL and OSL, 0 = off
	ScaleLengths   float64 // multiply ISL and OSL, 0 = off
	RebaseTime     bool    // shift so the first timestamp is 0
}

// Validate checks the filter's values; messages use the CLI flag names.
func (f Filter) Validate() error {
	var errs []error
	for _, c := range []struct {
		v    int
		flag string
	}{{f.MaxTotalTokens, "--max-total-tokens"}, {f.Limit, "--limit"}, {f.MaxISL, "--max-isl"}, {f.MaxOSL, "--max-osl"}} {
		if c.v < 0 {
			errs = append(errs, fmt.Errorf("%s must be >= 0, got %d", c.flag, c.v))
		}
	}
	for _, c := range []struct {
		v    float64
		flag string
	}{{f.StartMs, "--start-offset-ms"}, {f.EndMs, "--end-offset-ms"}, {f.Speedup, "--speedup"}, {f.ScaleLengths, "--scale-lengths"}} {
		if math.IsNaN(c.v) || math.IsInf(c.v, 0) || c.v < 0 {
			errs = append(errs, fmt.Errorf("%s must be a finite number >= 0, got %v", c.flag, c.v))
		}
	}
	if f.EndMs > 0 && f.EndMs < f.StartMs {
		errs = append(errs, fmt.Errorf("--end-offset-ms (%v) must be >= --start-offset-ms (%v)", f.EndMs, f.StartMs))
	}
	if f.RebaseTime && f.StartMs > 0 {
		errs = append(errs, errors.New("--auto-offset and --start-offset-ms are mutually exclusive (both set time zero)"))
	}
	return errors.Join(errs...)
}

func (f Filter) window() bool { return f.HasWindow || f.StartMs > 0 || f.EndMs > 0 }

// Apply returns a new workload filtered and reshaped by f (see Filter); wl is
// not modified. Row and Line keep pointing into the original Source. It is an
// error for no request to remain.
func Apply(wl *Workload, f Filter) (*Workload, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("filter: %w", err)
	}
	reqs := make([]Request, len(wl.Requests))
	for i := range wl.Requests {
		reqs[i] = cloneRequest(wl.Requests[i])
	}
	groups := sessions(reqs)
	var err error
	if f.window() {
		if groups, err = windowSessions(reqs, groups, f); err != nil {
			return nil, err
		}
	}
	reshapeLengths(reqs, groups, f, wl.blockSize())
	groups = dropLong(reqs, groups, f.MaxTotalTokens)
	groups = limitSessions(groups, f.Limit)
	kept := flatten(reqs, groups)
	if len(kept) == 0 {
		return nil, errors.New("filter: no requests left")
	}
	shiftTimes(kept, f)
	return &Workload{
		Requests:    kept,
		BlockSize:   wl.BlockSize,
		Concurrency: wl.Concurrency,
		Source:      wl.Source,
		Digest:      ComputeDigest(kept),
	}, nil
}

func (wl *Workload) blockSize() int {
	if wl.BlockSize > 0 {
		return wl.BlockSize
	}
	return MooncakeBlockSize
}

func windowSessions(reqs []Request, groups []session, f Filter) ([]session, error) {
	var out []session
	for _, g := range groups {
		first := &reqs[g.indices[0]]
		if !first.HasTimestamp {
			return nil, fmt.Errorf("filter: a time window needs timestamps, but request %d (line %d) has none",
				first.Row, first.Line)
		}
		t := first.TimestampMs
		if t >= f.StartMs && (f.EndMs == 0 || t <= f.EndMs) {
			out = append(out, g)
		}
	}
	return out, nil
}

func reshapeLengths(reqs []Request, groups []session, f Filter, blockSize int) {
	scale := f.ScaleLengths > 0 && f.ScaleLengths != 1
	if !scale && f.MaxISL == 0 && f.MaxOSL == 0 {
		return
	}
	ids := freshIDs{next: maxHashID(reqs) + 1}
	for _, g := range groups {
		for _, i := range g.indices {
			r := &reqs[i]
			isl, osl := r.InputLength, r.OutputLength
			if scale {
				isl, osl = scaleLength(isl, f.ScaleLengths), scaleLength(osl, f.ScaleLengths)
			}
			isl, osl = capLength(isl, f.MaxISL), capLength(osl, f.MaxOSL)
			r.OutputLength = osl
			if r.TextInput != "" || isl == r.InputLength {
				continue
			}
			r.HashIDs = resizeHashIDs(r.HashIDs, r.InputLength, isl, blockSize, &ids)
			r.InputLength = isl
		}
	}
}

func scaleLength(n int, s float64) int {
	if n == 0 {
		return 0
	}
	v := math.Round(float64(n) * s)
	return int(math.Max(1, math.Min(v, MaxTokens)))
}

func capLength(n, max int) int {
	if max > 0 && n > max {
		return max
	}
	return n
}

// freshIDs hands out hash ids above every id of the input workload.
type freshIDs struct {
	next int64
	cut  map[[2]int64]int64 // (original id, new token count) -> fresh id
}

func (f *freshIDs) take() int64 {
	id := f.next
	f.next++
	return id
}

// cutTo returns the fresh id for block id cut (or grown) to tokens tokens;
// hash ids are prefix-chained, so equal inputs give equal outputs.
func (f *freshIDs) cutTo(id int64, tokens int) int64 {
	key := [2]int64{id, int64(tokens)}
	if v, ok := f.cut[key]; ok {
		return v
	}
	if f.cut == nil {
		f.cut = make(map[[2]int64]int64)
	}
	v := f.take()
	f.cut[key] = v
	return v
}

func maxHashID(reqs []Request) int64 {
	var m int64 = -1
	for i := range reqs {
		for _, id := range reqs[i].HashIDs {
			m = max(m, id)
		}
	}
	return m
}

// resizeHashIDs maps a consistent hash list for oldISL tokens to one for
// newISL tokens: positions whose token count is unchanged keep their id,
// the others get fresh ids.
func resizeHashIDs(ids []int64, oldISL, newISL, blockSize int, fresh *freshIDs) []int64 {
	n := blocksFor(newISL, blockSize)
	if len(ids) == 0 || n == 0 {
		return nil
	}
	out := make([]int64, n)
	for i := range out {
		switch tokens := blockTokens(newISL, n, i, blockSize); {
		case i >= len(ids):
			out[i] = fresh.take()
		case blockTokens(oldISL, len(ids), i, blockSize) == tokens:
			out[i] = ids[i]
		default:
			out[i] = fresh.cutTo(ids[i], tokens)
		}
	}
	return out
}

// blockTokens is the token count of block i of n blocks covering isl tokens.
func blockTokens(isl, n, i, blockSize int) int {
	if i < n-1 {
		return blockSize
	}
	return isl - (n-1)*blockSize
}

func dropLong(reqs []Request, groups []session, maxTotal int) []session {
	if maxTotal == 0 {
		return groups
	}
	var out []session
	for _, g := range groups {
		ok := true
		for _, i := range g.indices {
			if reqs[i].InputLength+reqs[i].OutputLength > maxTotal {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, g)
		}
	}
	return out
}

func limitSessions(groups []session, limit int) []session {
	if limit == 0 {
		return groups
	}
	total := 0
	for k, g := range groups {
		if total+len(g.indices) > limit {
			return groups[:k]
		}
		total += len(g.indices)
	}
	return groups
}

// flatten returns the kept requests in their original order.
func flatten(reqs []Request, groups []session) []Request {
	var idx []int
	for _, g := range groups {
		idx = append(idx, g.indices...)
	}
	sort.Ints(idx)
	out := make([]Request, len(idx))
	for k, i := range idx {
		out[k] = reqs[i]
	}
	return out
}

func shiftTimes(reqs []Request, f Filter) {
	zero := 0.0
	switch {
	case f.window() && f.StartMs > 0:
		zero = f.StartMs
	case f.RebaseTime:
		zero = minTimestamp(reqs)
	}
	speedup := 1.0
	if f.Speedup > 0 {
		speedup = f.Speedup
	}
	for i := range reqs {
		r := &reqs[i]
		if r.HasTimestamp {
			r.TimestampMs = math.Max(0, r.TimestampMs-zero) / speedup
		}
		r.DelayMs /= speedup
	}
}

func minTimestamp(reqs []Request) float64 {
	m, seen := 0.0, false
	for i := range reqs {
		if reqs[i].HasTimestamp && (!seen || reqs[i].TimestampMs < m) {
			m, seen = reqs[i].TimestampMs, true
		}
	}
	return m
}
