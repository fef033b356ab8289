// Command p9load drives a 9P2000.L server with hugelgupf/p9's client the way
// Linux's v9fs talks: plain "9P2000.L" Tversion and a real n_uname in Tattach
// (the library's client sends a Google-extended version and NoUID, which diod
// refuses). It prints one line of figures per run; every loop is bounded.
//
//	p9load -addr A -aname N [-msize B] write NAME MIB
//	p9load ... read NAME
//	p9load ... create DIR N        (mkdir, then N x walk-clone, lcreate, write 4 KiB, clunk)
//	p9load ... listl DIR           (readdir, then walk+getattr+clunk per entry, like ls -l)
//	p9load ... getattr NAME N      (N x Tgetattr on one fid; latency percentiles)
//	p9load ... remove DIR          (rm -r: readdir, Tunlinkat each file, then each directory)
//	p9load ... par DIR [MIB CREATES STATS]  (8 concurrent streams on this one connection)
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hugelgupf/p9/p9"
	"github.com/semfs/semfs/integration/bench/ninep/p9tree"
	"github.com/semfs/semfs/ninep/v9fsconn"
)

const deadline = 120 * time.Second

func must(err error, what string) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "p9load: %s: %v\n", what, err)
		os.Exit(1)
	}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:5640", "server")
	aname := flag.String("aname", "/", "attach name")
	uid := flag.Uint("uid", 0, "n_uname sent in Tattach")
	msize := flag.Uint("msize", 64<<10, "msize (the client does not lower it to the server's)")
	flag.Parse()
	// One proc: the driver stands in for a kernel client, which sends one request
	// at a time and burns no CPU waiting. With a proc per CPU, Go's scheduler
	// spins idle threads on every hand-off, on the CPUs the server under test
	// needs (measured: it slowed both diod and semfs by 10-25 % on 2 vCPUs).
	runtime.GOMAXPROCS(1)
	args := flag.Args()
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: p9load [flags] write|read|create|listl|getattr|remove|par ARGS")
		os.Exit(2)
	}
	nc, err := net.Dial("tcp", *addr)
	must(err, "dial")
	cl, err := p9.NewClient(v9fsconn.Wrap(nc, uint32(*uid)), p9.WithMessageSize(uint32(*msize)))
	must(err, "version")
	defer cl.Close()
	root, err := cl.Attach(*aname)
	must(err, "attach")
	walk := func(names ...string) p9.File {
		_, f, err := root.Walk(names)
		must(err, "walk")
		return f
	}
	t0 := time.Now()
	over := func() bool { return time.Since(t0) > deadline }

	switch args[0] {
	case "write":
		mib, _ := strconv.Atoi(args[2])
		buf := make([]byte, 1<<20)
		for i := range buf {
			buf[i] = byte(i*131 + 7)
		}
		f, _, _, err := walk().Create(args[1], p9.WriteOnly, 0o644, p9.NoUID, p9.NoGID)
		must(err, "create")
		for i := 0; i < mib && !over(); i++ {
			n, err := f.WriteAt(buf, int64(i)<<20)
			must(err, "write")
			if n != len(buf) {
				must(io.ErrShortWrite, "write")
			}
		}
		must(f.Close(), "clunk")
		fmt.Printf("write mib=%d secs=%.3f\n", mib, time.Since(t0).Seconds())
	case "read":
		f := walk(args[1])
		_, _, err := f.Open(p9.ReadOnly)
		must(err, "open")
		buf := make([]byte, 1<<20)
		var off int64
		for !over() {
			n, err := f.ReadAt(buf, off)
			off += int64(n)
			if errors.Is(err, io.EOF) || (err == nil && n == 0) {
				break
			}
			must(err, "read")
		}
		must(f.Close(), "clunk")
		fmt.Printf("read bytes=%d secs=%.3f\n", off, time.Since(t0).Seconds())
	case "create":
		n, _ := strconv.Atoi(args[2])
		_, err := root.Mkdir(args[1], 0o755, p9.NoUID, p9.NoGID)
		must(err, "mkdir")
		dir := walk(args[1])
		data := make([]byte, 4096)
		for i := range data {
			data[i] = 'x'
		}
		i := 0
		// Per-step latencies, so a change can be placed: clone walk, Tlcreate,
		// Twrite, Tclunk.
		var steps [4][]time.Duration
		lap := func(k int, since time.Time) time.Time {
			now := time.Now()
			steps[k] = append(steps[k], now.Sub(since))
			return now
		}
		for ; i < n && !over(); i++ {
			a := time.Now()
			_, d, err := dir.Walk(nil) // Tlcreate turns the fid into the new file
			must(err, "clone")
			a = lap(0, a)
			f, _, _, err := d.Create(fmt.Sprintf("f%05d", i), p9.WriteOnly, 0o644, p9.NoUID, p9.NoGID)
			must(err, "create")
			a = lap(1, a)
			_, err = f.WriteAt(data, 0)
			must(err, "write")
			a = lap(2, a)
			must(f.Close(), "clunk")
			lap(3, a)
		}
		med := func(l []time.Duration) float64 {
			if len(l) == 0 {
				return 0
			}
			slices.Sort(l)
			return float64(l[len(l)/2].Nanoseconds()) / 1e3
		}
		fmt.Printf("create files=%d secs=%.3f walk_us=%.1f lcreate_us=%.1f write_us=%.1f clunk_us=%.1f\n",
			i, time.Since(t0).Seconds(), med(steps[0]), med(steps[1]), med(steps[2]), med(steps[3]))
	case "listl":
		dir := walk(args[1])
		lister := walk(args[1])
		_, _, err := lister.Open(p9.ReadOnly)
		must(err, "open")
		var off uint64
		count := 0
		for !over() {
			ents, err := lister.Readdir(off, uint32(*msize)-24)
			must(err, "readdir")
			if len(ents) == 0 {
				break
			}
			for _, e := range ents {
				off = e.Offset
				if e.Name == "." || e.Name == ".." {
					continue
				}
				count++
				_, f, err := dir.Walk([]string{e.Name})
				must(err, "walk")
				_, _, _, err = f.GetAttr(p9.AttrMaskAll)
				must(err, "getattr")
				must(f.Close(), "clunk")
			}
		}
		fmt.Printf("listl entries=%d secs=%.3f\n", count, time.Since(t0).Seconds())
	case "remove":
		path := strings.Split(args[1], "/")
		files, err := p9tree.RemoveAll(walk(path[:len(path)-1]...), path[len(path)-1], uint32(*msize)-24)
		must(err, "remove")
		fmt.Printf("remove files=%d secs=%.3f\n", files, time.Since(t0).Seconds())
	case "getattr":
		n, _ := strconv.Atoi(args[2])
		f := walk(strings.Split(args[1], "/")...)
		lat := make([]time.Duration, 0, n)
		for i := 0; i < n && !over(); i++ {
			a := time.Now()
			_, _, _, err := f.GetAttr(p9.AttrMaskAll)
			lat = append(lat, time.Since(a))
			must(err, "getattr")
		}
		slices.Sort(lat)
		us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
		fmt.Printf("getattr n=%d median_us=%.1f p90_us=%.1f p99_us=%.1f secs=%.3f\n",
			len(lat), us(lat[len(lat)/2]), us(lat[len(lat)*9/10]), us(lat[len(lat)*99/100]), time.Since(t0).Seconds())
	case "par":
		par(root, args[1:], *msize)
	default:
		fmt.Fprintln(os.Stderr, "p9load: unknown op", args[0])
		os.Exit(2)
	}
}
