package content

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkIndexBuild indexes a generated tree of text files from scratch and
// reports MB/s of text (issue 25's target: 40 MB/s per core). Run it on an
// idle machine: go test -run '^$' -bench IndexBuild ./index/content/
func BenchmarkIndexBuild(b *testing.B) {
	data := b.TempDir()
	r := rand.New(rand.NewPCG(1, 1))
	var total int64
	var walked []FileStat
	vocab := strings.Fields("func return error nil if else for range struct type interface package import const var string int byte map chan go defer select case default switch timeout payment webhook handler request response context")
	for i := range 2000 {
		var sb strings.Builder
		for sb.Len() < 8<<10+r.IntN(16<<10) {
			sb.WriteString(vocab[r.IntN(len(vocab))])
			sb.WriteString(fmt.Sprintf("%d", r.IntN(1000)))
			sb.WriteByte(" \n\t("[r.IntN(4)])
		}
		p := fmt.Sprintf("d%02d/f%04d.go", i%50, i)
		full := filepath.Join(data, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(sb.String()), 0o644)
		fi, _ := os.Stat(full)
		walked = append(walked, FileStat{Path: p, Size: fi.Size(), MTime: fi.ModTime()})
		total += fi.Size()
	}
	root, err := os.OpenRoot(data)
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	b.SetBytes(total)
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		x, err := Open(Options{Files: rootFiles{root}})
		if err != nil {
			b.Fatal(err)
		}
		x.Reconcile(x.Begin(), nil, walked)
		if err := x.Settle(context.Background()); err != nil {
			b.Fatal(err)
		}
		x.Close()
	}
	b.StopTimer()
	// Per CPU second too: on a shared machine the wall rate says more about
	// the neighbours than about the indexer.
	b.ReportMetric(float64(total)*float64(b.N)/cpuTime().Sub(cpu0).Seconds()/1e6, "MB/cpu-s")
}

// cpuTime is the process's user and system time as an instant.
func cpuTime() time.Time {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Unix(0, ru.Utime.Nano()+ru.Stime.Nano())
}
