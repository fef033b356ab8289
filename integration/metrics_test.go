package integration_test

import (
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/integration/semfstest"
)

// scrape parses a Prometheus text exposition strictly.
func scrape(t *testing.T, body io.ReadCloser, err error) map[string]*dto.MetricFamily {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(body)
	if err != nil {
		t.Fatalf("the metrics are not valid Prometheus text: %v", err)
	}
	return fams
}

// value returns the sample of family name whose labels include want
// (counter, gauge, or a histogram's count); ok is false if there is none.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// TestMetrics drives the real daemon (with its model) through the control
// socket and NFS, then reads GET /v1/metrics on the socket and /metrics on
// --metrics's TCP address: the series docs/metrics.md lists, with the counts the test
// caused.
func TestMetrics(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	writeFiles(t, data, map[string]string{"notes/a.md": "a", "notes/b.md": "b"})
	// NFS below acts as uid 1000; a root daemon checks its permissions, so the
	// shared directory must let it create (as semfstest's default data dir does).
	if err := os.Chmod(data, 0o777); err != nil {
		t.Fatal(err)
	}
	d := semfstest.Start(t, semfstest.Options{Data: data, Args: []string{"--metrics", "127.0.0.1:0"}})
	ctx := d.Context()
	c := d.Client
	// NFS and 9P traffic, each with one failure (a name that is not there);
	// both connections stay open while we scrape. The
	// queries below wait for these files to reach the index.
	v := d.MountNFS(t, "/@notes", 1000)
	f, err := v.OpenFile("from-nfs.txt", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("nfs"))
	f.Close()
	if _, _, err := v.Lookup("no-such-file"); err == nil {
		t.Fatal("NFS lookup of a missing file succeeded")
	}
	root9 := d.Attach9P(t, "@notes", 1000)
	create9P(t, root9, "from-9p.txt", []byte("9p"))
	if _, _, err := root9.Walk([]string{"no-such-file"}); err == nil {
		t.Fatal("9P walk to a missing file succeeded")
	}

	if _, err := c.Tag(ctx, client.TagRequest{Path: "notes/a.md", Task: "fix the login bug"}); err != nil {
		t.Fatal(err)
	}
	var ae *client.APIError
	if _, err := c.Tag(ctx, client.TagRequest{Path: "notes/none.md", Task: "x"}); !errors.As(err, &ae) {
		t.Fatalf("tag of a missing file: %v", err)
	}
	for range 2 {
		if _, err := c.Query(ctx, client.QueryRequest{Text: "login"}); err != nil {
			t.Fatal(err)
		}
	}
	body, err := c.Get(ctx, "/v1/metrics")
	fams := scrape(t, body, err)
	for _, w := range []struct {
		name   string
		labels map[string]string
		want   float64 // -1: present, any value
	}{
		{"semfs_requests_total", map[string]string{"protocol": "control", "op": "query"}, 2},
		{"semfs_requests_total", map[string]string{"protocol": "control", "op": "tag"}, 2},
		{"semfs_request_errors_total", map[string]string{"protocol": "control", "op": "tag"}, 1},
		{"semfs_request_duration_seconds", map[string]string{"protocol": "control", "op": "query"}, 2},
		{"semfs_index_records", nil, 4},
		{"semfs_index_tagged_records", nil, 1},
		{"semfs_index_vectors", map[string]string{"model": "use-lite"}, 1},
		{"semfs_reembed_queue", map[string]string{"state": "pending"}, -1},
		{"semfs_reembed_queue", map[string]string{"state": "queued"}, -1},
		{"semfs_embed_duration_seconds", nil, -1},
		{"semfs_open_connections", map[string]string{"protocol": "nfs"}, 1},
		{"semfs_open_connections", map[string]string{"protocol": "9p"}, 1},
		{"semfs_open_connections_by_app", map[string]string{"protocol": "9p", "app": "notes"}, 1},
		{"semfs_open_connections_by_app", map[string]string{"protocol": "nfs", "app": "notes"}, 1},
		{"semfs_requests_total", map[string]string{"protocol": "nfs", "op": "mnt"}, 1},
		{"semfs_requests_total", map[string]string{"protocol": "nfs", "op": "write"}, -1},
		{"semfs_request_errors_total", map[string]string{"protocol": "nfs", "op": "lookup"}, -1},
		{"semfs_request_duration_seconds", map[string]string{"protocol": "nfs", "op": "lookup"}, -1},
		{"semfs_requests_total", map[string]string{"protocol": "9p", "op": "attach"}, 1},
		{"semfs_requests_total", map[string]string{"protocol": "9p", "op": "lcreate"}, 1},
		{"semfs_request_errors_total", map[string]string{"protocol": "9p", "op": "walk"}, -1},
		{"semfs_request_duration_seconds", map[string]string{"protocol": "9p", "op": "write"}, -1},
		{"go_goroutines", nil, -1},
	} {
		got, ok := value(fams, w.name, w.labels)
		if !ok || (w.want >= 0 && got != w.want) {
			t.Errorf("%s%v = %v (present %v), want %v", w.name, w.labels, got, ok, w.want)
		}
	}
	if n, _ := value(fams, "semfs_embed_duration_seconds", nil); n < 1 {
		t.Errorf("semfs_embed_duration_seconds counted %v embed calls; the tag and the queries embedded", n)
	}
	for _, ok := range []map[string]string{
		{"protocol": "control", "op": "query"}, {"protocol": "nfs", "op": "write"},
		{"protocol": "9p", "op": "attach"}, {"protocol": "9p", "op": "lcreate"},
	} {
		if n, found := value(fams, "semfs_request_errors_total", ok); found {
			t.Errorf("%v: %v errors counted; none failed", ok, n)
		}
	}

	// --metrics serves the same registry over TCP.
	h, err := c.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	addr := h.Listeners["metrics"]
	if addr == "" {
		t.Fatalf("health lists no metrics listener: %v", h.Listeners)
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	tcp := scrape(t, resp.Body, nil)
	if got, _ := value(tcp, "semfs_requests_total", map[string]string{"protocol": "control", "op": "query"}); got != 2 {
		t.Errorf("TCP /metrics: control query requests = %v, want 2", got)
	}

	// docs/metrics.md's command works as written.
	if curl, err := exec.LookPath("curl"); err == nil {
		out, err := exec.Command(curl, "-sf", "--unix-socket", d.Socket, "http://x/v1/metrics").Output()
		if err != nil || !strings.Contains(string(out), "semfs_index_records 4") {
			t.Errorf("curl --unix-socket: %v\n%.500s", err, out)
		}
	}
}
