#!/usr/bin/python3
"""Recompute a run directory's aggregates from its per-request records with
numpy and compare them with profile_export_aiperf.json: every per-request
metric (list metrics flattened, as AIPerf does) and every statistic AIPerf
writes (avg, population std, min, max, numpy-linear percentiles).

    /usr/bin/python3 scripts/check_numpy_aggregates.py RUN_DIR [RUN_DIR ...]

Exits 1 on any mismatch beyond 1e-9 relative. Needs python3-numpy; no
test needs it (the statistics' own goldens are committed).
"""
import json
import sys

import numpy as np

PCTS = {"p1": 1, "p5": 5, "p10": 10, "p25": 25, "p50": 50, "p75": 75, "p90": 90, "p95": 95, "p99": 99}


def records(path):
    with open(path) as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def check(run):
    values = {}
    for rec in records(run + "/profile_export.jsonl"):
        if rec.get("error") or rec["metadata"].get("benchmark_phase") == "warmup":
            continue
        for tag, m in (rec.get("metrics") or {}).items():
            v = m["value"]
            values.setdefault(tag, []).extend(v if isinstance(v, list) else [v])
    agg = json.load(open(run + "/profile_export_aiperf.json"))
    bad = checked = 0
    for tag, vals in sorted(values.items()):
        stats = agg.get(tag)
        if not isinstance(stats, dict) or "p50" not in stats:
            continue
        arr = np.asarray(vals, dtype=np.float64)
        want = {"avg": np.mean(arr), "std": np.std(arr), "min": np.min(arr), "max": np.max(arr)}
        want.update({k: np.percentile(arr, p) for k, p in PCTS.items()})
        for k, w in want.items():
            checked += 1
            got = stats.get(k)
            if got is None or abs(got - w) > 1e-9 * max(1.0, abs(w)):
                bad += 1
                print(f"{run}: {tag}.{k}: aggregate {got}, numpy {w}")
    print(f"{run}: {checked} statistics of {len(values)} metrics checked against numpy, {bad} differ")
    return bad == 0


if __name__ == "__main__":
    ok = all([check(d) for d in sys.argv[1:]])
    sys.exit(0 if ok else 1)
