package traces

import (
	"fmt"
	"strconv"
	"strings"
)

// ShardSpec names one of Count deterministic parts of a workload (k6's
// execution segments, striped by session): shard Index of Count.
type ShardSpec struct {
	Index, Count int
}

// String is "I/N".
func (s ShardSpec) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Validate checks 0 <= Index < Count.
func (s ShardSpec) Validate() error {
	if s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("shard %d/%d: want 0 <= index < count", s.Index, s.Count)
	}
	return nil
}

// ParseShard reads "I/N" (0-based index I of N shards).
func ParseShard(s string) (ShardSpec, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "/")
	i, errI := strconv.Atoi(strings.TrimSpace(a))
	n, errN := strconv.Atoi(strings.TrimSpace(b))
	if !ok || errI != nil || errN != nil {
		return ShardSpec{}, fmt.Errorf("shard %q: want I/N, e.g. 0/3", s)
	}
	spec := ShardSpec{Index: i, Count: n}
	return spec, spec.Validate()
}

// Shard returns shard spec of wl: the sessions whose ordinal (order of
// first appearance; a request without a SessionID is a session of its own)
// is Index modulo Count, with every request unchanged (Row, timestamps,
// delays), in wl's order. Whole sessions stay on one shard and the shards
// of one Count partition wl exactly. A concurrency (closed-loop slots or a
// cap) is divided among the shards, the first Concurrency%Count shards
// taking one more, so the shards together hold wl's concurrency; it must
// then be at least Count. Digest is the shard's own.
func Shard(wl *Workload, spec ShardSpec) (*Workload, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if wl.Concurrency > 0 && wl.Concurrency < spec.Count {
		return nil, fmt.Errorf("shard %s: a concurrency of %d cannot be divided among %d shards", spec, wl.Concurrency, spec.Count)
	}
	out := &Workload{BlockSize: wl.BlockSize, Source: wl.Source, Concurrency: shareOf(wl.Concurrency, spec)}
	for i, k := range sessionOrdinals(wl.Requests) {
		if k%spec.Count == spec.Index {
			out.Requests = append(out.Requests, cloneRequest(wl.Requests[i]))
		}
	}
	out.Digest = ComputeDigest(out.Requests)
	return out, nil
}

// sessionOrdinals returns each request's session ordinal, in order of first
// appearance (a request without a SessionID is a session of its own).
func sessionOrdinals(reqs []Request) []int {
	out := make([]int, len(reqs))
	byID := make(map[string]int)
	next := 0
	for i := range reqs {
		id := reqs[i].SessionID
		k, ok := byID[id]
		if !ok || id == "" {
			k = next
			next++
			if id != "" {
				byID[id] = k
			}
		}
		out[i] = k
	}
	return out
}

// shareOf divides n among the shards, the first n%Count taking one more.
func shareOf(n int, spec ShardSpec) int {
	if n <= 0 {
		return n
	}
	share := n / spec.Count
	if spec.Index < n%spec.Count {
		share++
	}
	return share
}
