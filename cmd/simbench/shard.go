package main

import (
	"os"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/simbench/simbench/internal/usage"
	"github.com/simbench/simbench/realrun"
	"github.com/simbench/simbench/traces"
)

// jobIndexEnv is the shard index Kubernetes gives each pod of an Indexed Job.
const jobIndexEnv = "JOB_COMPLETION_INDEX"

// shardFlags select one deterministic part of a workload and its time
// origin (simbench run).
func shardFlags() []cli.Flag {
	return append(shardSelectFlags("of the schedule (0-based I): whole sessions, striped by session; the N shards together are the whole schedule"),
		&cli.StringFlag{Name: "start-at", DefaultText: "now", Usage: "RFC 3339 wall-clock `TIME` that is the schedule's time zero (the same on every shard), e.g. 2026-11-30T07:00:00Z"})
}

// shardSelectFlags are --shard, --shard-index and --shard-count; what
// completes the --shard usage line.
func shardSelectFlags(what string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "shard", Usage: "run shard `I/N` " + what},
		&cli.IntFlag{Name: "shard-index", DefaultText: "$" + jobIndexEnv, Usage: "shard index I (with --shard-count; a Kubernetes Indexed Job sets $" + jobIndexEnv + ")"},
		&cli.IntFlag{Name: "shard-count", DefaultText: "off", Usage: "number of shards N (with --shard-index or $" + jobIndexEnv + ")"},
	}
}

// shardFromFlags reads --shard or --shard-index/--shard-count (the index
// from $JOB_COMPLETION_INDEX when --shard-index is not given). ok is false
// when the run is not sharded.
func shardFromFlags(c *cli.Context) (spec traces.ShardSpec, ok bool, err error) {
	if c.IsSet("shard") {
		if c.IsSet("shard-index") || c.IsSet("shard-count") {
			return spec, false, usagef("--shard I/N cannot be combined with --shard-index/--shard-count")
		}
		spec, err = traces.ParseShard(c.String("shard"))
		if err != nil {
			return spec, false, usagef("--shard: %v", err)
		}
		return spec, true, nil
	}
	if !c.IsSet("shard-count") {
		if c.IsSet("shard-index") {
			return spec, false, usagef("--shard-index needs --shard-count")
		}
		return spec, false, nil
	}
	spec.Count, spec.Index = c.Int("shard-count"), c.Int("shard-index")
	if !c.IsSet("shard-index") {
		if spec.Index, err = envShardIndex(); err != nil {
			return spec, false, err
		}
	}
	if err := spec.Validate(); err != nil {
		return spec, false, usage.Wrap(err)
	}
	return spec, true, nil
}

func envShardIndex() (int, error) {
	v, set := os.LookupEnv(jobIndexEnv)
	if !set {
		return 0, usagef("--shard-count needs --shard-index or $%s", jobIndexEnv)
	}
	i, err := strconv.Atoi(v)
	if err != nil {
		return 0, usagef("$%s=%q: not an integer", jobIndexEnv, v)
	}
	return i, nil
}

// startAtFromFlags reads --start-at (zero when not given).
func startAtFromFlags(c *cli.Context) (time.Time, error) {
	if !c.IsSet("start-at") {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, c.String("start-at"))
	if err != nil {
		return t, usagef("--start-at %q: want an RFC 3339 time such as 2026-11-30T07:00:00Z", c.String("start-at"))
	}
	return t, nil
}

// planShard selects the shard of full the flags name (all of full when
// the run is not sharded) and its time origin.
func planShard(c *cli.Context, full *traces.Workload) (*traces.Workload, realrun.Shard, error) {
	startAt, err := startAtFromFlags(c)
	if err != nil {
		return nil, realrun.Shard{}, err
	}
	spec, sharded, err := shardFromFlags(c)
	if err != nil {
		return nil, realrun.Shard{}, err
	}
	if !sharded {
		return realrun.PlanShard(full, nil, startAt)
	}
	return realrun.PlanShard(full, &spec, startAt)
}
