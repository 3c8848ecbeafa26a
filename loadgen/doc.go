// Package loadgen sends a workload to an OpenAI-compatible server on its
// schedule and records every request as a results.Record.
//
// The pieces, in the order a request meets them:
//
//	pacer     pure schedule (package pacer): absolute deadlines from one start, no clock reads
//	driver    sleeps (then spins) to each deadline and hands the send to a worker
//	Prompts   deterministic prompts from hash_ids (text or token ids)
//	client    one HTTP request; SSE read incrementally, every event stamped
//	          with the time of the socket read that delivered it
//	Report    lateness and token-count checks printed after the run
//
// Lateness is data: each record keeps the intended and the actual send time,
// and faults (HTTP errors, cut streams, timeouts, cancellations) become error
// records in AIPerf's shape, never crashes.
package loadgen
