// Package compare lines up two runs of the same trace — by convention a real
// run (the reference) and a simulated one (the candidate) — field for field in
// AIPerf's terms, and says how far apart they are.
//
// It is opinionated in benchstat's way: every statistic gets a signed error
// % = (candidate − reference)/reference × 100 and nothing else; a zero
// reference gives no percentage rather than ±Inf; statistical and data caveats
// (unit conversions, unmatched requests, too few samples) are Warnings carried
// in the Report, never log lines and never fatal. Metric definitions are not
// repeated here: every per-request value and every summary statistic comes
// from package results.
//
// Inputs are a run directory, profile_export_aiperf.json, profile_export.jsonl,
// or a DynoSim replay report (JSON summary and per-request JSONL). When both
// runs have per-request records, Compare also joins them request by request
// (MAPE, Pearson r, BLIS quality grade) and looks for token-gap stalls: long
// pauses in the pooled gap distribution that request-level averages hide.
package compare
