package metrics_test

import (
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
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

// BenchmarkObserveParallel: Observe from every core at once, where a counter
// all requests share costs a cache line passed between them.
func BenchmarkObserveParallel(b *testing.B) {
	m := metrics.New()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Observe("9p", "walk", false, 30*time.Microsecond)
		}
	})
}

// TestObserveCountsEachSeries: requests observed at once from many goroutines
// land in their own (protocol, op) series, each counted exactly once, with an
// error series only for the ops that failed, and the NFS and 9P ones in
// FileRequests.
func TestObserveCountsEachSeries(t *testing.T) {
	m := metrics.New()
	ops := []struct{ protocol, op string }{{"9p", "walk"}, {"9p", "clunk"}, {"nfs", "walk"}, {"control", "query"}}
	const each = 500
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				o := ops[(g+i)%len(ops)]
				m.Observe(o.protocol, o.op, o.op == "walk" && i%5 == 0, time.Duration(i)*time.Microsecond)
			}
		}()
	}
	wg.Wait()
	// The control socket's quarter is not the file protocols'.
	if got, want := m.FileRequests(), uint64(8*each*3/4); got != want {
		t.Errorf("FileRequests %d, want %d (every NFS and 9P request, failed or not)", got, want)
	}
	var none *metrics.Metrics
	none.Observe("nfs", "read", false, 0)
	if none.FileRequests() != 0 {
		t.Error("a nil Metrics counted requests")
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	text := rec.Body.String()
	// 8 goroutines × 500 spread evenly over 4 ops: 1,000 each; of a walk
	// goroutine's walks (i ≡ op's slot − g mod 4), those with i%5 == 0 fail.
	fails := map[string]int{}
	for g := range 8 {
		for i := range each {
			if o := ops[(g+i)%len(ops)]; o.op == "walk" && i%5 == 0 {
				fails[o.protocol]++
			}
		}
	}
	for _, o := range ops {
		for _, want := range []string{
			fmt.Sprintf(`semfs_requests_total{op=%q,protocol=%q} 1000`, o.op, o.protocol),
			fmt.Sprintf(`semfs_request_duration_seconds_count{op=%q,protocol=%q} 1000`, o.op, o.protocol),
		} {
			if !strings.Contains(text, want+"\n") {
				t.Errorf("metrics lack %s", want)
			}
		}
		errs := fmt.Sprintf(`semfs_request_errors_total{op=%q,protocol=%q}`, o.op, o.protocol)
		if o.op != "walk" {
			if strings.Contains(text, errs) {
				t.Errorf("an error series for %s/%s, which never failed", o.protocol, o.op)
			}
		} else if want := fmt.Sprintf("%s %d\n", errs, fails[o.protocol]); !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
