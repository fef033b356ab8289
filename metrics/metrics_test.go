package metrics_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/metrics"
)

// TestRegistriesAreSeparate: two daemons in one process (tests do this) keep
// their own counts, and a nil *Metrics is a no-op.
func TestRegistriesAreSeparate(t *testing.T) {
	a, b := metrics.New(), metrics.New()
	a.Observe("9p", "walk", true, time.Millisecond)
	a.WatchIndex(func() index.Stats { return index.Stats{Records: 7, Vectors: map[string]int{"use-lite": 3}} })
	a.WatchConns("nfs", func() int { return 2 })
	a.WatchGiveUps("9p", func() uint64 { return 3 })
	release := a.Track("9p", "notes")
	a.Track("9p", "notes")
	release()
	var none *metrics.Metrics
	none.Track("9p", "x")()
	none.Observe("nfs", "read", false, time.Second)
	none.WatchConns("nfs", func() int { return 1 })
	none.WatchGiveUps("9p", func() uint64 { return 1 })

	get := func(m *metrics.Metrics) string {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		b, _ := io.ReadAll(rec.Body)
		return string(b)
	}
	ta, tb := get(a), get(b)
	for _, want := range []string{
		`semfs_requests_total{op="walk",protocol="9p"} 1`,
		`semfs_request_errors_total{op="walk",protocol="9p"} 1`,
		`semfs_request_duration_seconds_count{op="walk",protocol="9p"} 1`,
		`semfs_index_records 7`,
		`semfs_index_vectors{model="use-lite"} 3`,
		`semfs_open_connections{protocol="nfs"} 2`,
		`semfs_fast_path_given_up_total{protocol="9p"} 3`,
		`semfs_open_connections_by_app{app="notes",protocol="9p"} 1`,
	} {
		if !strings.Contains(ta, want) {
			t.Errorf("daemon a's metrics lack %s", want)
		}
		if strings.Contains(tb, want) {
			t.Errorf("daemon b's metrics show a's %s", want)
		}
	}
}

// BenchmarkObserve is the cost a request pays at its door:
//
//	go test ./metrics/ -run '^$' -bench Observe
func BenchmarkObserve(b *testing.B) {
	m := metrics.New()
	for i := 0; b.Loop(); i++ {
		m.Observe("nfs", "getattr", i%16 == 0, 30*time.Microsecond)
	}
}
