#!/usr/bin/python3
"""Regenerate results/testdata/numpy_stats.json: statistics computed by numpy
for random samples, the goldens that results.Summarize is checked against.

    /usr/bin/python3 scripts/gen_numpy_golden.py > results/testdata/numpy_stats.json

Needs Debian's python3-numpy (apt-get install python3-numpy). Tests do not
need Python: the output is committed.
"""
import json
import numpy as np

PCTS = [1, 5, 10, 25, 50, 75, 90, 95, 99]


def case(name, arr):
    arr = np.asarray(arr, dtype=np.float64)
    ps = np.percentile(arr, PCTS)
    return {
        "name": name,
        "values": [float(x) for x in arr],
        "avg": float(np.mean(arr)),
        "std": float(np.std(arr)),
        "min": float(np.min(arr)),
        "max": float(np.max(arr)),
        "sum": float(np.sum(arr)),
        "percentiles": [float(x) for x in ps],
    }


def main():
    rng = np.random.default_rng(20261130)
    cases = [
        case("one", [42.5]),
        case("two", [1.0, 2.0]),
        case("four", [1.0, 2.0, 3.0, 4.0]),
        case("ten", list(range(1, 11))),
        case("constant", [0.1] * 37),
        case("with_zeros", [0.0, 0.0, 0.0, 12.5, 13.0, 0.0, 250.0]),
    ]
    for n in [3, 17, 64, 100, 257, 1000, 3001]:
        cases.append(case(f"exponential_{n}", rng.exponential(18.0, n)))
        cases.append(case(f"lognormal_{n}", rng.lognormal(3.0, 1.2, n)))
    cases.append(case("integers_200", rng.integers(90, 210, 200)))
    print(json.dumps({"numpy_version": np.__version__, "percentiles": PCTS, "cases": cases}))


if __name__ == "__main__":
    main()
