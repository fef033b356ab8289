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
	b.SetBytes(total)
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		x, err := Open(Options{Files: Dir(data)})
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

// BenchmarkIndexBuildCorpus is BenchmarkIndexBuild on a real tree: the
// directory SEMFS_GREP_CORPUS names (integration/bench/grep/corpus.sh builds
// one of >= 50,000 files and >= 500 MB), the content index alone (the daemon's
// figure, tag index included, is bench.sh's). It reports MB of text per
// CPU-second, the measure that holds on a shared machine, and the postings'
// size in memory is in -benchmem's B/op only roughly (the garbage included).
//
//	SEMFS_GREP_CORPUS=/srv/grepcorpus go test -run '^$' -bench IndexBuildCorpus -benchtime 1x ./index/content/
func BenchmarkIndexBuildCorpus(b *testing.B) {
	dir := os.Getenv("SEMFS_GREP_CORPUS")
	if dir == "" {
		b.Skip("SEMFS_GREP_CORPUS not set: no corpus (integration/bench/grep/corpus.sh builds one)")
	}
	var walked []FileStat
	var total int64
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		walked = append(walked, FileStat{Path: rel, Size: fi.Size(), MTime: fi.ModTime()})
		total += fi.Size()
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(total)
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		x, err := Open(Options{Files: Dir(dir)})
		if err != nil {
			b.Fatal(err)
		}
		x.Reconcile(x.Begin(), nil, walked)
		if err := x.Settle(context.Background()); err != nil {
			b.Fatal(err)
		}
		st := x.Stats()
		b.ReportMetric(float64(st.Trigrams), "trigrams")
		x.Close()
	}
	b.StopTimer()
	b.ReportMetric(float64(total)*float64(b.N)/cpuTime().Sub(cpu0).Seconds()/1e6, "MB/cpu-s")
}
