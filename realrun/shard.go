package realrun

import (
	"fmt"
	"os"
	"time"

	"github.com/simbench/simbench/internal/usage"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/traces"
)

// Shard is how one process's part of a run relates to the whole run.
type Shard struct {
	Full    *traces.Workload // the whole workload (the run's identity); nil = the part itself
	Spec    traces.ShardSpec
	Sharded bool
	// StartAt, when set, is the wall-clock instant that is the schedule's
	// time zero on every shard.
	StartAt time.Time
}

// PlanShard selects the part of full that spec names (the whole of full
// when spec is nil) and returns it with its Shard.
func PlanShard(full *traces.Workload, spec *traces.ShardSpec, startAt time.Time) (*traces.Workload, Shard, error) {
	plan := Shard{Full: full, StartAt: startAt}
	if spec == nil {
		return full, plan, nil
	}
	plan.Spec, plan.Sharded = *spec, true
	wl, err := traces.Shard(full, plan.Spec)
	if err != nil {
		return nil, plan, usage.Wrap(err)
	}
	if len(wl.Requests) == 0 {
		return nil, plan, usage.Errorf("shard %s has no requests: the workload has fewer sessions than %d shards", plan.Spec, plan.Spec.Count)
	}
	return wl, plan, nil
}

// Note is printed before a sharded run ("" when not sharded).
func (plan Shard) Note(wl *traces.Workload) string {
	if !plan.Sharded {
		return ""
	}
	return fmt.Sprintf("shard %s: %d of %d requests\n", plan.Spec, len(wl.Requests), len(plan.full(wl).Requests))
}

func (plan Shard) full(wl *traces.Workload) *traces.Workload {
	if plan.Full == nil {
		return wl
	}
	return plan.Full
}

// simbenchSection is input_config's "simbench" section of a run: where
// it ran and, for a shard, which part this is and how late it started.
// The clock offset to other hosts is not estimated.
func (plan Shard) simbenchSection(wl *traces.Workload, startLate time.Duration) *results.SimbenchInfo {
	sec := &results.SimbenchInfo{}
	if host, err := os.Hostname(); err == nil {
		sec.Host = host
	}
	if !plan.StartAt.IsZero() {
		late := float64(startLate) / 1e6
		sec.StartAt, sec.StartLateMs = plan.StartAt.UTC().Format(time.RFC3339Nano), &late
	}
	if plan.Sharded {
		sec.Shard = &results.ShardInfo{Spec: plan.Spec.String(), Index: plan.Spec.Index, Count: plan.Spec.Count,
			Digest: wl.Digest, Requests: len(wl.Requests)}
	}
	return sec
}

// workloadInfo is input_config's "workload" section: the whole workload
// (every shard's), whose digest identifies the run, and the spec that
// built it (every transform of the trace), so it can be built again.
func workloadInfo(full *traces.Workload, spec traces.Spec) (*results.WorkloadInfo, error) {
	b, err := spec.JSON()
	if err != nil {
		return nil, err
	}
	return &results.WorkloadInfo{Source: full.Source, Digest: full.Digest, Requests: len(full.Requests),
		BlockSize: full.BlockSize, Concurrency: full.Concurrency, Spec: b}, nil
}
