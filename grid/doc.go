// Package grid simulates a grid of simulator configurations (sim.Grid) on
// one workload, one run directory per point, and summarises the grid:
// grid_summary.json with every point's headline metrics, the Pareto fronts
// of output throughput per worker against TTFT p99 and ITL p99, and
// grid_pareto.png. A grid can be split into shards (points I, I+N, …) that
// Merge joins into what the unsharded grid writes. It is not a load sweep
// (packages loadsweep and capacity), which varies the load, not the
// configuration.
package grid
