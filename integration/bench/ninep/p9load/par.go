package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/hugelgupf/p9/p9"
)

// par runs eight streams at once on the one connection root belongs to, the
// way eight processes share one kernel mount: the p9 client tags each request
// and keeps them all in flight. Stream i%4 == 0 reads DIR/rI (MIB MiB in 1 MiB
// calls, which the client cuts to msize), 1 writes DIR/wI (MIB MiB, then
// Tfsync), 2 creates CREATES files of 4 KiB (clone walk, Tlcreate, Twrite,
// Tclunk), 3 walks to DIR/r0 and stats it STATS times (walk, Tgetattr,
// Tclunk). The readers' files are written first, untimed. It prints the same
// line as integration/bench/nfs/nfspar, so one script reads both.
func par(root p9.File, args []string, msize uint) {
	num := func(i, def int) int {
		if len(args) > i {
			if n, err := strconv.Atoi(args[i]); err == nil {
				return n
			}
		}
		return def
	}
	name, mib, creates, stats := args[0], num(1, 32), num(2, 500), num(3, 4000)
	_, err := root.Mkdir(name, 0o755, p9.NoUID, p9.NoGID)
	must(err, "mkdir")
	_, dir, err := root.Walk([]string{name})
	must(err, "walk")
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i*131 + 7)
	}
	writeFile := func(d p9.File, fname string, sync bool) {
		_, c, err := d.Walk(nil)
		must(err, "clone")
		f, _, _, err := c.Create(fname, p9.WriteOnly, 0o644, p9.NoUID, p9.NoGID)
		must(err, "create")
		for i := 0; i < mib; i++ {
			n, err := f.WriteAt(buf, int64(i)<<20)
			must(err, "write")
			if n != len(buf) {
				must(io.ErrShortWrite, "write")
			}
		}
		if sync {
			must(f.FSync(), "fsync")
		}
		must(f.Close(), "clunk")
	}
	for i := 0; i < 8; i += 4 {
		writeFile(dir, fmt.Sprintf("r%d", i), false)
	}

	const streams = 8
	var finished [4]time.Duration
	var mu sync.Mutex
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := 0; i < streams; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			rbuf := make([]byte, 1<<20)
			switch i % 4 {
			case 0:
				_, f, err := dir.Walk([]string{fmt.Sprintf("r%d", i)})
				must(err, "walk")
				_, _, err = f.Open(p9.ReadOnly)
				must(err, "open")
				var off int64
				for off < int64(mib)<<20 && !over(t0) {
					n, err := f.ReadAt(rbuf, off)
					off += int64(n)
					if errors.Is(err, io.EOF) || (err == nil && n == 0) {
						must(io.ErrUnexpectedEOF, "read")
					}
					must(err, "read")
				}
				must(f.Close(), "clunk")
			case 1:
				writeFile(dir, fmt.Sprintf("w%d", i), true)
			case 2:
				data := buf[:4096]
				for k := 0; k < creates && !over(t0); k++ {
					_, d, err := dir.Walk(nil)
					must(err, "clone")
					f, _, _, err := d.Create(fmt.Sprintf("c%d_%05d", i, k), p9.WriteOnly, 0o644, p9.NoUID, p9.NoGID)
					must(err, "create")
					_, err = f.WriteAt(data, 0)
					must(err, "write")
					must(f.Close(), "clunk")
				}
			case 3:
				for k := 0; k < stats && !over(t0); k++ {
					_, f, err := dir.Walk([]string{"r0"})
					must(err, "walk")
					_, _, _, err = f.GetAttr(p9.AttrMaskAll)
					must(err, "getattr")
					must(f.Close(), "clunk")
				}
			}
			d := time.Since(t0)
			mu.Lock()
			finished[i%4] = max(finished[i%4], d)
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	fmt.Printf("par streams=%d secs=%.3f read_s=%.3f write_s=%.3f create_s=%.3f stat_s=%.3f mib=%d creates=%d stats=%d msize=%d\n",
		streams, time.Since(t0).Seconds(), finished[0].Seconds(), finished[1].Seconds(),
		finished[2].Seconds(), finished[3].Seconds(), mib, creates, stats, msize)
}

func over(t0 time.Time) bool { return time.Since(t0) > deadline }
