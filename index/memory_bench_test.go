package index

import (
	"runtime"
	"testing"

	"github.com/semfs/semfs/embed"
)

// BenchmarkOpenMemory reports what an open index keeps in memory per file: 100k
// tagged records with a 512-d vector each, the heap live after Open (after a
// GC) minus the heap live before it. buntdb holds every record and stored
// vector in memory, and the index keeps its own float32 copy of each vector for
// scoring, plus the keyword table.
//
//	go test ./index/ -run '^$' -bench OpenMemory -benchtime 1x
func BenchmarkOpenMemory(b *testing.B) {
	c := corpus(b, 100_000, embed.UseLite.Dims)
	b.ResetTimer()
	var before, after runtime.MemStats
	for range b.N {
		runtime.GC()
		runtime.ReadMemStats(&before)
		x, err := Open(c.dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(c.n), "heap-B/file")
		if err := x.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
