package feed_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/semfs/semfs/server/feed"
)

// BenchmarkRecordCreates records what the daemon records of an NFS create
// burst: per file, a batch of its create and its settled write, enqueued
// one batch at a time as each COMMIT applies it, into a log on disk. Its
// allocs/op (per file, the log's goroutine included) and a -cpuprofile are
// what to read, not its time on a shared machine.
//
//	go test ./server/feed/ -run '^$' -bench RecordCreates -benchmem -cpuprofile /tmp/feed.prof
func BenchmarkRecordCreates(b *testing.B) {
	l, err := feed.Open(feed.Options{Path: filepath.Join(b.TempDir(), feed.FileName)})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	at := time.Now()
	names := make([]string, 4096)
	for i := range names {
		names[i] = fmt.Sprintf("dir/f%05d", i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := names[i%len(names)]
		l.Enqueue([]feed.Event{
			{Op: feed.OpCreate, Path: p, Type: "file", App: "bench", At: at},
			{Op: feed.OpWrite, Path: p, Type: "file", App: "bench", Size: 4096, At: at},
		})
	}
	if err := l.Settle(context.Background()); err != nil {
		b.Fatal(err)
	}
}
