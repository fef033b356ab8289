package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/semfs/semfs/index/content"
)

// WatchContent exports the content index's counts (grep's index).
func (m *Metrics) WatchContent(stats func() content.IndexStats) {
	if m == nil {
		return
	}
	m.reg.MustRegister(&contentCollector{stats: stats})
}

var (
	descContentFiles   = prometheus.NewDesc("semfs_content_files", "Regular files whose text is in the content index.", nil, nil)
	descContentBytes   = prometheus.NewDesc("semfs_content_bytes", "Bytes of text in the content index.", nil, nil)
	descContentSkipped = prometheus.NewDesc("semfs_content_skipped_files", "Regular files not content-indexed, by reason (too big, binary, not UTF-8); grep reads them with all.", []string{"reason"}, nil)
	descContentPending = prometheus.NewDesc("semfs_content_pending_files", "Files written since they were content-indexed, or queued: grep reads them directly.", nil, nil)
)

type contentCollector struct{ stats func() content.IndexStats }

func (c *contentCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descContentFiles, descContentBytes, descContentSkipped, descContentPending} {
		ch <- d
	}
}

func (c *contentCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	ch <- prometheus.MustNewConstMetric(descContentFiles, prometheus.GaugeValue, float64(s.Files))
	ch <- prometheus.MustNewConstMetric(descContentBytes, prometheus.GaugeValue, float64(s.Bytes))
	for reason, n := range s.Skipped {
		ch <- prometheus.MustNewConstMetric(descContentSkipped, prometheus.GaugeValue, float64(n), reason)
	}
	ch <- prometheus.MustNewConstMetric(descContentPending, prometheus.GaugeValue, float64(s.Pending))
}
