// Package bench holds benchmarks of the real daemon; per-protocol peer
// comparisons live in its subdirectories (nfs/, ninep/) as scripts.
package bench_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/semfs/semfs/integration/semfstest"
)

// BenchmarkDaemonStart measures `semfs serve` from exec to listening, on a
// backing directory and index that already hold n files and records: opening
// buntdb and Bleve, loading vectors and reconciling against a walk of the tree.
//
//	go test -run '^$' -bench DaemonStart -benchtime 3x ./integration/bench/
func BenchmarkDaemonStart(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			base := b.TempDir()
			data := filepath.Join(base, "data")
			for i := 0; i < n; i++ {
				dir := filepath.Join(data, fmt.Sprintf("app%02d", i%50), fmt.Sprintf("d%03d", i/1000))
				if i%1000 < 50 {
					if err := os.MkdirAll(dir, 0o755); err != nil {
						b.Fatal(err)
					}
				}
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("note-%06d.md", i)), nil, 0o644); err != nil {
					b.Fatal(err)
				}
			}
			t0 := time.Now()
			d := semfstest.Start(b, semfstest.Options{Data: data, ModelDir: "off"})
			b.ReportMetric(time.Since(t0).Seconds(), "first-start-s")
			d.Stop()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				d.Restart()
				b.StopTimer()
				d.Stop()
				b.StartTimer()
			}
		})
	}
}
