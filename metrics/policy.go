package metrics

import "github.com/prometheus/client_golang/prometheus"

// newDenials is semfs_policy_denials_total: the refusals the --policy file
// caused. Its labels are the app and the operation only, never a path, so
// that no hidden name reaches a scrape.
func newDenials() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "semfs_policy_denials_total",
		Help: `Requests the --policy file refused, by app ("" unattributed) and operation (tag, snapshot, read, write, ...).`,
	}, []string{"app", "op"})
}

// PolicyDenied counts one refusal (policy.Live.Denied).
func (m *Metrics) PolicyDenied(app, op string) {
	if m == nil {
		return
	}
	m.denials.WithLabelValues(app, op).Inc()
}
