package metrics

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/index"
)

// Metrics holds one daemon's series. All methods are safe for concurrent use;
// a nil *Metrics records nothing.
type Metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec   // protocol, op
	errors   *prometheus.CounterVec   // protocol, op
	latency  *prometheus.HistogramVec // protocol, op
	appConns *prometheus.GaugeVec     // protocol, app
	embed    prometheus.Histogram
	embedN   prometheus.Counter
	denials  *prometheus.CounterVec // app, op (policy.go)
	// ops holds each (protocol, op)'s request counter and latency histogram
	// (opKey → *opSeries), found once: the vectors' label lookup hashes
	// and compares the labels under a lock, three times a request.
	ops sync.Map
}

type opKey struct{ protocol, op string }

type opSeries struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

// New returns a daemon's metrics with the Go runtime and process collectors.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "semfs_requests_total",
		Help: "Requests answered, by protocol (nfs, its MOUNT calls included; 9p; control) and operation.",
	}, []string{"protocol", "op"})
	m.errors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "semfs_request_errors_total",
		Help: "Requests answered with an error (NFS status other than OK, RPC error, Rlerror, HTTP 4xx/5xx), by protocol and operation.",
	}, []string{"protocol", "op"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "semfs_request_duration_seconds",
		Help:    "Time from a request's first byte read to its answer's first byte written, by protocol and operation (control op query is the query latency).",
		Buckets: prometheus.ExponentialBuckets(50e-6, 4, 10), // 50 µs .. 13 s
	}, []string{"protocol", "op"})
	m.appConns = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "semfs_open_connections_by_app",
		Help: `Open NFS and 9P connections by the apps they serve: each connection counts once under every app whose mount (/@APP) or attach (aname @APP) it has used, "" for the root export.`,
	}, []string{"protocol", "app"})
	m.embed = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "semfs_embed_duration_seconds",
		Help:    "Time the in-process model took per Embed call (a batch of texts).",
		Buckets: prometheus.ExponentialBuckets(1e-3, 3, 10), // 1 ms .. 20 s
	})
	m.embedN = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "semfs_embedded_texts_total",
		Help: "Texts the in-process model embedded.",
	})
	m.denials = newDenials()
	m.reg.MustRegister(m.requests, m.errors, m.latency, m.appConns, m.embed, m.embedN, m.denials,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Observe records one answered request.
func (m *Metrics) Observe(protocol, op string, failed bool, d time.Duration) {
	if m == nil {
		return
	}
	k := opKey{protocol, op}
	v, ok := m.ops.Load(k)
	if !ok {
		v, _ = m.ops.LoadOrStore(k, &opSeries{
			requests: m.requests.WithLabelValues(protocol, op),
			latency:  m.latency.WithLabelValues(protocol, op),
		})
	}
	s := v.(*opSeries)
	s.requests.Inc()
	if failed {
		// Looked up here only: an op that never fails has no error series.
		m.errors.WithLabelValues(protocol, op).Inc()
	}
	s.latency.Observe(d.Seconds())
}

// FileRequests is how many NFS and 9P requests have been answered so far: a
// count that stands still while no mount is being used. The control socket's
// are not counted: a query wants the indexes current, not waited for. It is
// summed from the requests' own series when asked (the contents' workers ask
// every 50 ms), not counted apart: one counter every request of every
// connection adds to is one cache line the cores pass back and forth (a
// parallel Observe took 170–270 ns with the series alone, 270–380 with it).
// 0 for nil.
func (m *Metrics) FileRequests() uint64 {
	if m == nil {
		return 0
	}
	var n uint64
	m.ops.Range(func(k, v any) bool {
		if k.(opKey).protocol != "control" {
			var d dto.Metric
			if v.(*opSeries).requests.Write(&d) == nil {
				n += uint64(d.GetCounter().GetValue())
			}
		}
		return true
	})
	return n
}

// WatchConns exports a door's open connections, read at scrape time.
func (m *Metrics) WatchConns(protocol string, open func() int) {
	if m == nil {
		return
	}
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "semfs_open_connections",
		Help:        "Client connections being served, by protocol.",
		ConstLabels: prometheus.Labels{"protocol": protocol},
	}, func() float64 { return float64(open()) }))
}

// WatchGiveUps exports how many connections a door's fast path gave up on
// (ninep.Server.FastPathGiveUps), read at scrape time: each is a connection
// whose requests the library answers from then on, slower, which a log line
// also reports.
func (m *Metrics) WatchGiveUps(protocol string, n func() uint64) {
	if m == nil {
		return
	}
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name:        "semfs_fast_path_given_up_total",
		Help:        "Connections whose fast path gave up (a fid-making request went unanswered too long), by protocol; the library answers them from then on.",
		ConstLabels: prometheus.Labels{"protocol": protocol},
	}, func() float64 { return float64(n()) }))
}

// Track counts a connection of protocol under app until release is called
// (nfs.Options.Track, ninep's).
func (m *Metrics) Track(protocol, app string) (release func()) {
	if m == nil {
		return func() {}
	}
	g := m.appConns.WithLabelValues(protocol, app)
	g.Inc()
	return g.Dec
}

// WatchIndex exports the index's counts, read at scrape time.
func (m *Metrics) WatchIndex(stats func() index.Stats) {
	if m == nil {
		return
	}
	m.reg.MustRegister(&indexCollector{stats: stats})
}

var (
	descRecords = prometheus.NewDesc("semfs_index_records", "Files the index knows.", nil, nil)
	descTagged  = prometheus.NewDesc("semfs_index_tagged_records", "Files with a task or related apps.", nil, nil)
	descVectors = prometheus.NewDesc("semfs_index_vectors", "Tag vectors held in memory, by model.", []string{"model"}, nil)
	descReembed = prometheus.NewDesc("semfs_reembed_queue", "The background re-embedder's work: pending (not yet queued) and queued records.", []string{"state"}, nil)
	descReDone  = prometheus.NewDesc("semfs_reembed_records_total", "Records the re-embedder finished since start, by result (done, failed).", []string{"result"}, nil)
)

type indexCollector struct{ stats func() index.Stats }

func (c *indexCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRecords, descTagged, descVectors, descReembed, descReDone} {
		ch <- d
	}
}

func (c *indexCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	ch <- prometheus.MustNewConstMetric(descRecords, prometheus.GaugeValue, float64(s.Records))
	ch <- prometheus.MustNewConstMetric(descTagged, prometheus.GaugeValue, float64(s.Tagged))
	for model, n := range s.Vectors {
		ch <- prometheus.MustNewConstMetric(descVectors, prometheus.GaugeValue, float64(n), model)
	}
	ch <- prometheus.MustNewConstMetric(descReembed, prometheus.GaugeValue, float64(s.Reembed.Pending), "pending")
	ch <- prometheus.MustNewConstMetric(descReembed, prometheus.GaugeValue, float64(s.Reembed.Queued), "queued")
	ch <- prometheus.MustNewConstMetric(descReDone, prometheus.CounterValue, float64(s.Reembed.Done), "done")
	ch <- prometheus.MustNewConstMetric(descReDone, prometheus.CounterValue, float64(s.Reembed.Failed), "failed")
}

// Embedder times e's Embed calls; nil e stays nil.
func (m *Metrics) Embedder(e embed.Embedder) embed.Embedder {
	if m == nil || e == nil {
		return e
	}
	return &timedEmbedder{Embedder: e, m: m}
}

// timedEmbedder embeds the model and overrides Embed only.
type timedEmbedder struct {
	embed.Embedder
	m *Metrics
}

func (t *timedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	start := time.Now()
	v, err := t.Embedder.Embed(ctx, texts)
	t.m.embed.Observe(time.Since(start).Seconds())
	t.m.embedN.Add(float64(len(texts)))
	return v, err
}
