package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/semfs/semfs/index/passage"
)

// WatchPassages exports the passage index's progress (meaning over contents).
func (m *Metrics) WatchPassages(stats func() passage.Stats) {
	if m == nil {
		return
	}
	m.reg.MustRegister(&passageCollector{stats: stats})
}

var (
	descPassageFiles    = prometheus.NewDesc("semfs_passage_files", "Files split into passages (meaning over contents).", nil, nil)
	descPassageBytes    = prometheus.NewDesc("semfs_passage_bytes", "Bytes of text split into passages.", nil, nil)
	descPassages        = prometheus.NewDesc("semfs_passages", "Passages indexed by their words.", nil, nil)
	descPassageEmbedded = prometheus.NewDesc("semfs_passages_embedded", "Passages with their vector.", nil, nil)
	descPassagePending  = prometheus.NewDesc("semfs_passage_pending", "Paths queued for reading plus passages waiting for their vector.", nil, nil)
)

type passageCollector struct{ stats func() passage.Stats }

func (c *passageCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPassageFiles, descPassageBytes, descPassages, descPassageEmbedded, descPassagePending} {
		ch <- d
	}
}

func (c *passageCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	ch <- prometheus.MustNewConstMetric(descPassageFiles, prometheus.GaugeValue, float64(s.Files))
	ch <- prometheus.MustNewConstMetric(descPassageBytes, prometheus.GaugeValue, float64(s.Bytes))
	ch <- prometheus.MustNewConstMetric(descPassages, prometheus.GaugeValue, float64(s.Passages))
	ch <- prometheus.MustNewConstMetric(descPassageEmbedded, prometheus.GaugeValue, float64(s.Embedded))
	ch <- prometheus.MustNewConstMetric(descPassagePending, prometheus.GaugeValue, float64(s.Pending))
}
