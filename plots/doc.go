// Package plots draws simbench's pictures with gonum/plot: CDF overlays,
// error bars, per-request scatter, token-gap timelines and throughput over
// time. It knows nothing of runs or comparisons: callers hand it plain
// numbers and names. Drawing is kept apart from encoding (each figure is a
// *plot.Plot or a Figure), and every PNG is rendered at the fixed DPI and
// size below, so a picture looks the same on every machine. Its subpackage
// figures lays out the figures of runs and comparisons with these kinds.
package plots
