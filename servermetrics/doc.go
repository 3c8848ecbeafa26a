// Package servermetrics scrapes servers' Prometheus metrics into AIPerf's server-metrics export and the TTFT breakdown.
package servermetrics
