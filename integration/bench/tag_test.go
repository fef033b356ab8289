package bench_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/embed/embedtest"
	"github.com/semfs/semfs/integration/semfstest"
)

// BenchmarkTag10kThroughDaemon tags 10,000 files through the control socket
// with the in-process USE-lite model embedding every tag text: one file per
// POST /v1/tag, and in batches of 500 per POST /v1/tags. Besides the wall
// time it reports the daemon's CPU time (srv-cpu-s, from /proc) and this
// process's (client-cpu-s: building, encoding and decoding the requests), which
// on a shared machine say more than the wall time; srv-cores is the daemon's
// CPU time over the wall time, how many cores it kept busy.
//
//	go test -run '^$' -bench Tag10k -benchtime 1x ./integration/bench/
func BenchmarkTag10kThroughDaemon(b *testing.B) {
	modelDir := embedtest.ModelDir(b)
	const n = 10_000
	tasks := []string{"fix auth bug", "write release notes", "triage flaky test", "plan sprint", "review design doc"}
	apps := []string{"code-editor", "terminal", "browser", "notes", "calendar"}
	req := func(i int) client.TagRequest {
		return client.TagRequest{
			Path:        fmt.Sprintf("proj%02d/notes/item-%05d.md", i%40, i),
			Task:        fmt.Sprintf("%s %d", tasks[i%len(tasks)], i),
			RelatedApps: []string{apps[i%len(apps)], apps[(i+2)%len(apps)]},
		}
	}
	for _, mode := range []string{"one-by-one", "batch-500"} {
		b.Run(mode, func(b *testing.B) {
			for it := 0; it < b.N; it++ {
				b.StopTimer()
				data := filepath.Join(b.TempDir(), "data")
				for i := 0; i < n; i++ {
					p := filepath.Join(data, filepath.FromSlash(req(i).Path))
					if i < 40 {
						os.MkdirAll(filepath.Dir(p), 0o755)
					}
					if err := os.WriteFile(p, nil, 0o644); err != nil {
						b.Fatal(err)
					}
				}
				d := semfstest.Start(b, semfstest.Options{Data: data, ModelDir: modelDir})
				ctx := context.Background()
				b.StartTimer()
				t0, srv0, cli0 := time.Now(), cpuOf(b, d.PID()), selfCPU()
				if mode == "one-by-one" {
					for i := 0; i < n; i++ {
						if _, err := d.Client.Tag(ctx, req(i)); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					for i := 0; i < n; i += 500 {
						batch := make([]client.TagRequest, 0, 500)
						for j := i; j < i+500; j++ {
							batch = append(batch, req(j))
						}
						if _, err := d.Client.TagMany(ctx, batch); err != nil {
							b.Fatal(err)
						}
					}
				}
				wall := time.Since(t0)
				srv := cpuOf(b, d.PID()) - srv0
				b.ReportMetric(wall.Seconds(), "s/10k-files")
				b.ReportMetric(srv.Seconds(), "srv-cpu-s")
				b.ReportMetric(srv.Seconds()/wall.Seconds(), "srv-cores")
				b.ReportMetric((selfCPU() - cli0).Seconds(), "client-cpu-s")
				b.StopTimer()
				d.Stop()
			}
		})
	}
}

// selfCPU is this process's user+system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
