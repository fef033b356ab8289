package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/content"
	"github.com/semfs/semfs/index/passage"
	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/servertest"
)

// BenchmarkCreateThroughIndex creates 2,000 files of 4 KiB through the core
// with the daemon's change stream into a real index, each fsynced as an NFS
// COMMIT would: the cost the index adds to a create burst.
//
//	go test ./cmd/semfs/ -run '^$' -bench CreateThroughIndex -benchtime 2x
func BenchmarkCreateThroughIndex(b *testing.B) {
	createThroughIndex(b, false)
}

// BenchmarkCreateThroughIndexWatched is the same burst with the watcher
// following the backing directory (follow.go), as `semfs serve` runs by
// default: the kernel reports the core's own creates too, and each batch of
// them costs a scoped reconcile that finds the index already in line. The
// difference to BenchmarkCreateThroughIndex is that cost (cpu-ms is the
// whole process's user+system time per burst, the watcher's included).
//
//	go test ./cmd/semfs/ -run '^$' -bench 'CreateThroughIndex' -benchtime 3x
func BenchmarkCreateThroughIndexWatched(b *testing.B) {
	createThroughIndex(b, true)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func createThroughIndex(b *testing.B, watch bool) {
	log := slog.New(slog.DiscardHandler)
	var cpu time.Duration
	for it := 0; it < b.N; it++ {
		b.StopTimer()
		dir := b.TempDir()
		data := filepath.Join(dir, "data")
		// World-writable: a daemon running as root acts for an identity
		// without a uid as nobody, which must be able to create here.
		if err := os.Mkdir(data, 0o777); err != nil || os.Chmod(data, 0o777) != nil {
			b.Fatal(err)
		}
		idx, err := index.Open(filepath.Join(dir, "index"), indexOptions(nil, nil, log))
		if err != nil {
			b.Fatal(err)
		}
		q := server.NewBatcher(func(ctx context.Context, cs []server.Change) error { return applyChanges(idx, log, cs) }, 4096, log)
		fsys, err := server.New(data, server.Options{Sink: q, Logger: log})
		if err != nil {
			b.Fatal(err)
		}
		var w *server.Watcher
		var d *daemon
		if watch {
			// The content and passage indexes as serve opens them: the
			// watcher's handler feeds both.
			d = &daemon{fs: fsys, idx: idx, log: log, paths: paths{Index: filepath.Join(dir, "index")},
				args: serveArgs{contentMax: content.DefaultMax, passageCPU: passage.DefaultCPU}}
			if err := d.openContent(); err != nil {
				b.Fatal(err)
			}
			if err := d.openPassages(); err != nil {
				b.Fatal(err)
			}
			if w, err = fsys.Watch(server.WatchOptions{Logger: log}, d.follow); err != nil {
				b.Fatal(err)
			}
			w.Run()
		}
		ctx := server.WithIdentity(context.Background(), server.Identity{MountApp: "bench"})
		page := make([]byte, 4096)
		c0 := cpuTime()
		b.StartTimer()
		for i := 0; i < 2000; i++ {
			f, _, err := fsys.Create(ctx, fmt.Sprintf("f%05d", i), 0o644, true)
			if err != nil {
				b.Fatal(err)
			}
			f.WriteAt(page, 0)
			f.Sync()
			f.Close()
		}
		if w != nil {
			// Until the watcher has handled the whole burst (events come in
			// order: a marker written last is handled last): its cost is
			// part of it.
			if err := os.WriteFile(filepath.Join(data, "marker"), nil, 0o644); err != nil {
				b.Fatal(err)
			}
			servertest.WaitFor(b, "the watcher to index the marker written after the burst", func() bool {
				_, err := idx.Get("marker")
				return err == nil
			})
			b.ReportMetric(float64(w.Stats().Batches), "batches")
			w.Close()
			d.passages.Close()
			d.content.Close()
			os.Remove(filepath.Join(data, "marker"))
		}
		b.StopTimer()
		cpu += cpuTime() - c0
		fsys.Close()
		q.Close()
		if n := idx.Stats().Records; n != 2000 && !(watch && n == 2001) {
			b.Fatalf("%d records after 2,000 creates", n)
		}
		idx.Close()
	}
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms")
}
