//go:build linux

package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"
)

// observer counts one door's requests (nfs.Options.Observe, ninep's).
func (d *daemon) observer(protocol string) func(op string, failed bool, took time.Duration) {
	return func(op string, failed bool, took time.Duration) { d.metrics.Observe(protocol, op, failed, took) }
}

// tracker counts one door's connections per app (nfs.Options.Track, ninep's).
func (d *daemon) tracker(protocol string) func(app string) func() {
	return func(app string) func() { return d.metrics.Track(protocol, app) }
}

// observeControl counts control requests; a 4xx or 5xx answer is an error.
func (d *daemon) observeControl(route string, status int, took time.Duration) {
	d.metrics.Observe("control", route, status >= 400, took)
}

// startMetrics exports the index's counts and the doors' open connections and, with --metrics, serves
// the registry over TCP. Runs at the end of start, once the doors exist.
func (d *daemon) startMetrics() error {
	d.metrics.WatchIndex(d.idx.Stats)
	d.metrics.WatchContent(d.content.Stats)
	d.metrics.WatchPassages(d.passages.Stats)
	if d.nfs != nil {
		d.metrics.WatchConns("nfs", d.nfs.OpenConns)
	}
	if d.ninep != nil {
		d.metrics.WatchConns("9p", d.ninep.OpenConns)
		d.metrics.WatchGiveUps("9p", d.ninep.FastPathGiveUps)
	}
	if d.args.metricsAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", d.args.metricsAddr)
	if err != nil {
		return fmt.Errorf("metrics listener: %w", err)
	}
	d.listeners["metrics"] = ln.Addr().String()
	mux := http.NewServeMux()
	mux.Handle("/metrics", d.metrics.Handler())
	d.metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	d.goServe("metrics", func() error {
		if err := d.metricsSrv.Serve(ln); err != http.ErrServerClosed {
			return err
		}
		return nil
	})
	return nil
}

func (d *daemon) stopMetrics(ctx context.Context) {
	if d.metricsSrv != nil {
		d.metricsSrv.Shutdown(ctx)
	}
}
