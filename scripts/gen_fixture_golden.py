#!/usr/bin/python3
"""Regenerate results/testdata/aiperf_fixture_numpy.json: numpy statistics of
every per-request metric in an AIPerf profile_export.jsonl (list metrics
flattened, as AIPerf does), valid profiling records only.

    /usr/bin/python3 scripts/gen_fixture_golden.py testdata/aiperf/qwen_concurrency1/profile_export.jsonl \
        > results/testdata/aiperf_fixture_numpy.json
"""
import json
import sys
import numpy as np

PCTS = [1, 5, 10, 25, 50, 75, 90, 95, 99]


def main(path):
    values = {}
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            rec = json.loads(line)
            if rec.get("error") or rec["metadata"].get("benchmark_phase", "profiling") != "profiling":
                continue
            for tag, mv in rec["metrics"].items():
                v = mv["value"]
                if v is None:
                    continue
                values.setdefault(tag, []).extend(v if isinstance(v, list) else [v])
    out = {}
    for tag, vs in sorted(values.items()):
        arr = np.asarray(vs, dtype=np.float64)
        ps = np.percentile(arr, PCTS)
        out[tag] = {"avg": float(np.mean(arr)), "std": float(np.std(arr)), "min": float(np.min(arr)),
                    "max": float(np.max(arr)), "sum": float(np.sum(arr)), "count": int(arr.size),
                    **{f"p{p}": float(x) for p, x in zip(PCTS, ps)}}
    print(json.dumps(out, indent=1, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1])
