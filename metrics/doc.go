// Package metrics is the daemon's Prometheus instrumentation: one registry per
// daemon (no package-level mutable state), served at GET /v1/metrics on the
// control socket and optionally over TCP (semfs serve --metrics ADDR).
//
// Counters and latencies come from Observe, called by each door's dispatch
// point (today the control socket); the index's counts, the re-embedder's queue
// and the doors' open connections are read at scrape time; the in-process
// model is timed by an Embedder decorator.
package metrics
