// Package capacity is the load sweep's record and rules: the points of a
// sweep over concurrency or request rate (DIR/sweep_summary.json, kind
// "load_sweep"), the load lists a sweep takes (1,2,4 and 1..64x2), the SLO
// capacity of a sweep and the saturation rule that stops one early.
//
// It imports only results and the standard library, so compare can read
// sweeps; running one is capacity/loadsweep's job.
package capacity
