// Package figures draws the PNG figures of one run and of a comparison:
// compare's digests and reports laid out with package plots (CDFs, token
// gaps over time, throughput, error bars, TTFT breakdowns, scatter plots),
// rendered concurrently by a Writer. simbench plot, simbench compare
// --plots and simbench validate write them.
package figures
