// Package realrun writes the run directory of a real run, as sim.WriteRun
// writes a simulated one: it replays a workload on an OpenAI-compatible
// server (package loadgen), scrapes the server's metrics around it, and
// writes the AIPerf files, the workload and input_config (package results),
// for the whole workload or one shard of it. Merge joins the shard
// directories of one run into the directory a single process would have
// written.
package realrun
