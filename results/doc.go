// Package results holds simbench's per-request records and the one definition
// of every AIPerf metric computed from them, the statistics AIPerf reports
// (numpy-linear percentiles, population std), and the readers and writers of
// AIPerf's files: profile_export.jsonl, profile_export_aiperf.json and
// profile_export_aiperf.csv.
//
// The pipeline has two levels, as in AIPerf:
//
//	Record          raw timings of one request (ns), real or simulated
//	  │ ComputeMetrics
//	  ▼
//	RecordMetrics   that request's metric values in display units (one JSONL line)
//	  │ Aggregator.Add … Aggregator.Profile
//	  ▼
//	Profile         run-level statistics (profile_export_aiperf.json / .csv)
//
// AIPerf's own per-request exports enter at the second level, so summarizing
// an AIPerf JSONL and summarizing simbench's go through the same code.
//
// Every output directory (a run, a parent of runs, a sweep) is written
// whole through OpenOutputDir (or WriteOutput): locked against a second
// writer, written beside itself and swapped in, so no file of an earlier
// run stays among the new ones.
package results
