package bench_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs/integration/bench/ninep/p9tree"
	"github.com/semfs/semfs/integration/semfstest"
)

// BenchmarkFollow measures the running daemon following host changes in a
// backing directory of 100,000 files in 5,051 directories: the inotify
// watches it holds, the daemon's CPU at idle and for a burst, and the delay
// from a host process's create to the file being answered on the control
// socket, and what a client's rm -r of 5,000 files costs the daemon. The scan mode (the fallback past the watch limit, and after a queue
// overflow) is measured by its CPU per full rescan.
//
//	go test -run '^$' -bench Follow -benchtime 1x -timeout 30m ./integration/bench/
func BenchmarkFollow(b *testing.B) {
	const n = 100_000
	base := b.TempDir()
	data := filepath.Join(base, "data")
	writeTree(b, data, n)
	// First start builds the index (not measured); the runs below restart it.
	d := semfstest.Start(b, semfstest.Options{Data: data, Index: filepath.Join(base, "index"), ModelDir: "off"})
	d.Stop()

	for i := 0; i < b.N; i++ {
		d.RestartWith("--watch=inotify")
		m := regexp.MustCompile(`following changes made directly in the backing directory" mode=(\w+) watches=(\d+)`).FindStringSubmatch(d.Log())
		if m == nil || m[1] != "inotify" {
			b.Fatalf("no inotify watcher: %q\n%s", m, d.Log())
		}
		watches, _ := strconv.Atoi(m[2])
		b.ReportMetric(float64(watches), "watches")
		settle(b, d)
		b.ReportMetric(float64(rssKiB(b, d.PID())), "rss-KiB-inotify")
		b.ReportMetric(cpuOver(b, d.PID(), 10*time.Second).Seconds()*1000/10, "idle-cpu-ms/s-inotify")

		// One file at a time: create to answered.
		var delays []time.Duration
		for k := 0; k < 20; k++ {
			p := fmt.Sprintf("app%02d/d%03d/single-%d.md", k%50, k, k)
			t0 := time.Now()
			if err := os.WriteFile(filepath.Join(data, p), []byte("x"), 0o644); err != nil {
				b.Fatal(err)
			}
			waitFile(b, d, p)
			delays = append(delays, time.Since(t0))
		}
		sort.Slice(delays, func(i, j int) bool { return delays[i] < delays[j] })
		b.ReportMetric(float64(delays[len(delays)/2].Microseconds())/1000, "create-to-query-ms-p50")
		b.ReportMetric(float64(delays[len(delays)-1].Microseconds())/1000, "create-to-query-ms-max")

		// A burst: 5,000 files in 50 new directories, as an untar would.
		c0 := cpuOf(b, d.PID())
		t0 := time.Now()
		for k := 0; k < 5000; k++ {
			dir := filepath.Join(data, "burst", fmt.Sprintf("b%02d", k/100))
			if k%100 == 0 {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					b.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d.md", k)), []byte("x"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		written := time.Since(t0)
		waitFile(b, d, "burst/b49/f4999.md")
		b.ReportMetric(float64(time.Since(t0).Milliseconds()), "burst5000-to-query-ms")
		b.ReportMetric(float64(written.Milliseconds()), "burst5000-write-ms")
		b.ReportMetric((cpuOf(b, d.PID())-c0).Seconds()*1000, "burst5000-cpu-ms")
		// The same 5,000 files removed by a client (rm -r through 9P),
		// then a request: the indexes forget them one removal at a time,
		// in a table of 100,000 (content.Table).
		settle(b, d)
		c0 = cpuOf(b, d.PID())
		t0 = time.Now()
		if _, err := p9tree.RemoveAll(d.Attach9P(b, "/", 0), "burst", 1<<16); err != nil {
			b.Fatal(err)
		}
		removed := time.Since(t0)
		waitGone(b, d, "burst/b49/f4999.md")
		b.ReportMetric(float64(removed.Milliseconds()), "client-rm5000-ms")
		b.ReportMetric(float64(time.Since(t0).Milliseconds()-removed.Milliseconds()), "client-rm5000-then-query-ms")
		b.ReportMetric((cpuOf(b, d.PID())-c0).Seconds()*1000, "client-rm5000-cpu-ms")

		d.RestartWith("--watch=off")
		settle(b, d)
		b.ReportMetric(float64(rssKiB(b, d.PID())), "rss-KiB-off")
		b.ReportMetric(cpuOver(b, d.PID(), 10*time.Second).Seconds()*1000/10, "idle-cpu-ms/s-off")

		// Full rescans every 10 s: CPU per rescan of the 100,000 files.
		d.RestartWith("--watch=scan", "--watch-rescan=10s")
		b.ReportMetric(cpuOver(b, d.PID(), 30*time.Second).Seconds()*1000/3, "scan-cpu-ms-per-rescan")
		d.Stop()
	}
}

// cpuOf is the user+system CPU time process pid has used.
func cpuOf(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * (time.Second / 100) // USER_HZ
}

func cpuOver(b *testing.B, pid int, d time.Duration) time.Duration {
	c0 := cpuOf(b, pid)
	time.Sleep(d)
	return cpuOf(b, pid) - c0
}

func rssKiB(b *testing.B, pid int) int {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	m := regexp.MustCompile(`VmRSS:\s+(\d+)`).FindSubmatch(raw)
	v, _ := strconv.Atoi(string(m[1]))
	return v
}

// settle waits until the restarted daemon has nothing left to catch up on:
// its start-up reconcile done (it runs in the background on a sound index)
// and the content and passage indexes with nothing pending, so that "idle" is
// idle and a delay is not a busy daemon's.
func settle(b *testing.B, d *semfstest.Daemon) {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		h, err := d.Client.Health(d.Context())
		if err == nil && !strings.Contains(h.LastReconcile, "in progress") &&
			(h.Content == nil || h.Content.Pending == 0) && (h.Passages == nil || h.Passages.Pending == 0) {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("the daemon did not settle within 10 min: %+v %v", h, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func waitFile(b *testing.B, d *semfstest.Daemon, p string) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := d.Client.File(d.Context(), p); err == nil {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s not indexed within 60s", p)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func waitGone(b *testing.B, d *semfstest.Daemon, p string) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := d.Client.File(d.Context(), p); err != nil {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s still indexed after 60s", p)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
