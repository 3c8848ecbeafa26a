package results

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Merging the shards of one run (simbench merge): the per-request records of
// every shard are put in the order one process would have sent them and
// written with one Aggregator over all of them, so the merged aggregates are
// exactly a single computation over the union. No metric is recomputed: the
// records are written as they were read.

// SortAsSent orders records as one process sends them, by intended send
// time (the request start when a record has none), then request start,
// then trace row, and renumbers session_num 0, 1, … in that order.
func SortAsSent(recs []RecordMetrics) {
	slices.SortStableFunc(recs, func(a, b RecordMetrics) int {
		return cmp.Or(cmp.Compare(intendedNs(&a), intendedNs(&b)),
			cmp.Compare(a.Meta.RequestStartNs, b.Meta.RequestStartNs),
			cmp.Compare(traceRow(&a), traceRow(&b)))
	})
	for i := range recs {
		recs[i].Meta.SessionNum = i
	}
}

func intendedNs(m *RecordMetrics) int64 {
	if m.Ext != nil && m.Ext.IntendedSendNs != 0 {
		return m.Ext.IntendedSendNs
	}
	return m.Meta.RequestStartNs
}

func traceRow(m *RecordMetrics) int {
	if m.Ext != nil {
		return m.Ext.TraceRow
	}
	return -1
}

// WriteRecordsRun writes the run directory dir from records already
// computed: profile_export.jsonl in the given order, and
// profile_export_aiperf.json and .csv aggregated from the same records by
// one Aggregator. It returns the profile it wrote.
func WriteRecordsRun(dir string, recs []RecordMetrics, meta RunMeta, slos []SLO) (*Profile, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, RecordsName)
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	jw, agg := NewJSONLWriter(bw), NewAggregator(slos)
	for i := range recs {
		if err := jw.Write(&recs[i]); err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		agg.Add(&recs[i])
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	p := agg.Profile()
	if err := applyMeta(p, meta, slos); err != nil {
		return nil, err
	}
	return p, WriteProfileFiles(dir, p)
}
