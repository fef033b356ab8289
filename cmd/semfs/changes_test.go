package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/server"
)

// BenchmarkCreateThroughIndex creates 2,000 files of 4 KiB through the core
// with the daemon's change stream into a real index, each fsynced as an NFS
// COMMIT would: the cost the index adds to a create burst.
//
//	go test ./cmd/semfs/ -run '^$' -bench CreateThroughIndex -benchtime 2x
func BenchmarkCreateThroughIndex(b *testing.B) {
	log := slog.New(slog.DiscardHandler)
	for it := 0; it < b.N; it++ {
		b.StopTimer()
		dir := b.TempDir()
		data := filepath.Join(dir, "data")
		if err := os.Mkdir(data, 0o755); err != nil {
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
		ctx := server.WithIdentity(context.Background(), server.Identity{MountApp: "bench"})
		page := make([]byte, 4096)
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
		b.StopTimer()
		fsys.Close()
		q.Close()
		if n := idx.Stats().Records; n != 2000 {
			b.Fatalf("%d records after 2,000 creates", n)
		}
		idx.Close()
	}
}
