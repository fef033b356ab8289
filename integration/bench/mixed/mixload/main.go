// Command mixload drives one semfs daemon with a mixed load of many clients at
// once, each on its own connection, through the real clients: NFSv3 reads and
// writes (go-nfs-client, AUTH_UNIX), 9P2000.L reads and writes (hugelgupf/p9
// through v9fsconn, as the kernel speaks it), queries and tags (client/, the
// control socket). Every client loops on one kind of operation until the time
// is up; the figure is how many operations of each kind completed, and how many
// failed. It is the load of issue 30 item 7; ab.sh beside it runs it against
// two builds alternately.
//
//	mixload -nfs ADDR -9p ADDR -socket PATH [-clients 64] [-secs 60] [-seed]
//
// The clients are dealt round-robin over the kinds, in this order: nfs-read,
// nfs-write, 9p-read, 9p-write, query, tag (64 clients: 11 of the first four,
// 10 of the last two); -kinds deals them over fewer, to look at one kind
// alone. The operations:
//   - nfs-read: LOOKUP seed/rN.txt, then READ it whole (16 KiB).
//   - nfs-write: CREATE a new file in the client's directory, WRITE 4 KiB
//     (the client writes FILE_SYNC), COMMIT.
//   - 9p-read: walk to seed/rN.txt, Tlopen, Tread 16 KiB, Tclunk.
//   - 9p-write: clone the directory's fid, Tlcreate a new file, Twrite 4 KiB,
//     Tclunk.
//   - query: POST /v1/query, two or three words from the seed files' text,
//     limit 10 (-rank and -scope set its rank and scope: -scope tags asks
//     what a build without contents could answer).
//   - tag: POST /v1/tag on a seed file, with a task from the same words.
//
// -rate KIND=N,... paces the kinds named: at most N operations a second of
// each, shared by its clients (a client behind its pace runs flat out). A
// kind a build answers faster takes more of the machine in a closed loop;
// paced, two builds are given the same work of it, and the other kinds show
// what is left for them.
//
// -seed writes the seed files (Seeds of them, through NFS) and registers
// nothing; run it once per daemon before the timed runs. Its output is one line:
//
//	mixed clients=64 secs=60.0 total=N nfs-read=N ... tag=N errors=N load_cpu_s=S
//
// followed, when some failed, by the first error of each kind on stderr.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hugelgupf/p9/p9"
	nfsc "github.com/willscott/go-nfs-client/nfs"
	"github.com/willscott/go-nfs-client/nfs/rpc"

	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/integration/semfstest"
	"github.com/semfs/semfs/ninep/v9fsconn"
)

// Seeds is how many files the readers read and the taggers tag.
const Seeds = 64

// seedSize is each seed file's size: four 4 KiB pages of words.
const seedSize = 16 << 10

var kinds = []string{"nfs-read", "nfs-write", "9p-read", "9p-write", "query", "tag"}

// words are the seed files' vocabulary, so queries and tags find them.
var words = strings.Fields(`login token expired session cache quarter revenue report
draft invoice budget kernel driver network latency deploy release notes editor
meeting agenda schedule backup restore archive sensor metric alert dashboard`)

func main() {
	nfsAddr := flag.String("nfs", "127.0.0.1:2049", "the daemon's NFS address")
	ninepAddr := flag.String("9p", "127.0.0.1:5640", "the daemon's 9P address")
	socket := flag.String("socket", "", "the daemon's control socket")
	clients := flag.Int("clients", 64, "clients, dealt round-robin over the kinds")
	secs := flag.Float64("secs", 60, "seconds of load")
	seed := flag.Bool("seed", false, "write the seed files, then exit")
	run := flag.String("run", "r", "this run's name: the writers' directories are RUN-nfsI and RUN-9pI")
	rank := flag.String("rank", "", "the queries' rank (best, seed; empty: the daemon's default)")
	scope := flag.String("scope", "", "the queries' scope (all, tags; empty: the daemon's default, all)")
	only := flag.String("kinds", strings.Join(kinds, ","), "the kinds to deal the clients over (to look at one alone)")
	rates := flag.String("rate", "", "KIND=N,...: at most N operations a second of each KIND named, over its clients (to give two builds the same work of that kind)")
	flag.Parse()
	var dealt []int
	for _, name := range strings.Split(*only, ",") {
		k := slices.Index(kinds, name)
		if k < 0 {
			fail("-kinds: %q is none of %s", name, strings.Join(kinds, ","))
		}
		dealt = append(dealt, k)
	}
	if *socket == "" {
		fail("-socket is required")
	}
	var rate [6]float64
	for _, kv := range strings.Split(*rates, ",") {
		if kv == "" {
			continue
		}
		name, n, ok := strings.Cut(kv, "=")
		k := slices.Index(kinds, name)
		v, err := strconv.ParseFloat(n, 64)
		if !ok || k < 0 || err != nil || v <= 0 {
			fail("-rate: %q is not KIND=N (N > 0, KIND one of %s)", kv, strings.Join(kinds, ","))
		}
		rate[k] = v
	}
	if *seed {
		seedFiles(*nfsAddr)
		return
	}

	r := load(config{nfs: *nfsAddr, ninep: *ninepAddr, socket: *socket, clients: *clients,
		secs: *secs, run: *run, rank: *rank, scope: *scope, kinds: dealt, rate: rate})
	line := ""
	for k, name := range kinds {
		line += fmt.Sprintf(" %s=%d", name, r.ops[k])
		if r.firstErr[k] != "" {
			fmt.Fprintf(os.Stderr, "mixload: %s: %d errors, first: %s\n", name, r.errs[k], r.firstErr[k])
		}
	}
	// The load's own CPU: on a machine it shares with the daemon, what it
	// spends (decoding bigger answers, say) the daemon does not get.
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	loadCPU := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	fmt.Printf("mixed clients=%d secs=%.1f total=%d%s errors=%d load_cpu_s=%.2f\n", *clients, r.took, r.total(), line, r.errors(), loadCPU.Seconds())
}

// config is one timed run: where the daemon listens, and the load.
type config struct {
	nfs, ninep, socket string
	clients            int
	secs               float64
	run, rank, scope   string
	kinds              []int // indexes into kinds the clients are dealt over
	// rate, where > 0, is the most operations a second of that kind (by
	// index into kinds), shared evenly by its clients.
	rate [6]float64
}

// result counts a run's operations and failures by kind (indexes into kinds).
type result struct {
	ops, errs [6]int64
	firstErr  [6]string
	took      float64 // seconds
}

func (r result) total() (n int64) {
	for _, v := range r.ops {
		n += v
	}
	return n
}

func (r result) errors() (n int64) {
	for _, v := range r.errs {
		n += v
	}
	return n
}

// load connects every client, then runs them all until cfg.secs have passed.
func load(cfg config) result {
	var ops, errs [6]atomic.Int64
	var firstErr [6]atomic.Pointer[string]
	ctl := client.New(cfg.socket)
	var wg sync.WaitGroup
	start := make(chan struct{})
	var deadline, t0 time.Time
	var per [6]int // clients of each kind
	for i := 0; i < cfg.clients; i++ {
		per[cfg.kinds[i%len(cfg.kinds)]]++
	}
	for i := 0; i < cfg.clients; i++ {
		k := cfg.kinds[i%len(cfg.kinds)]
		// A paced client's nth operation starts no sooner than n·every after
		// the start: behind, it runs flat out until it catches up.
		var every time.Duration
		if cfg.rate[k] > 0 {
			every = time.Duration(float64(per[k]) / cfg.rate[k] * float64(time.Second))
		}
		op := newClient(k, i, cfg.run, cfg.nfs, cfg.ninep, ctl, cfg.rank, cfg.scope)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer op.close()
			r := rand.New(rand.NewPCG(uint64(i), 30))
			<-start // deadline and t0 are set before start closes
			for n := 0; time.Now().Before(deadline); n++ {
				if every > 0 {
					if wait := time.Until(t0.Add(time.Duration(n) * every)); wait > 0 {
						time.Sleep(wait)
					}
					if !time.Now().Before(deadline) {
						break
					}
				}
				if err := op.do(r, n); err != nil {
					if errs[k].Add(1) == 1 {
						s := err.Error()
						firstErr[k].Store(&s)
					}
					continue
				}
				ops[k].Add(1)
			}
		}()
	}
	t0 = time.Now()
	deadline = t0.Add(time.Duration(cfg.secs * float64(time.Second)))
	close(start)
	wg.Wait()
	var r result
	r.took = time.Since(t0).Seconds()
	for k := range kinds {
		r.ops[k], r.errs[k] = ops[k].Load(), errs[k].Load()
		if p := firstErr[k].Load(); p != nil {
			r.firstErr[k] = *p
		}
	}
	return r
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "mixload: "+format+"\n", a...)
	os.Exit(1)
}

// loadClient is one client's connection and its one operation.
type loadClient struct {
	do    func(r *rand.Rand, n int) error
	close func()
}

func newClient(kind, i int, run, nfsAddr, ninepAddr string, ctl *client.Client, rank, scope string) loadClient {
	page := make([]byte, 4096)
	for j := range page {
		page[j] = byte('a' + (i+j)%26)
	}
	switch kinds[kind] {
	case "nfs-read", "nfs-write":
		v, done := mountNFS(nfsAddr, uint32(os.Getuid()))
		if kinds[kind] == "nfs-read" {
			buf := make([]byte, seedSize)
			return loadClient{do: func(r *rand.Rand, _ int) error {
				f, err := v.Open(seedName(r.IntN(Seeds)))
				if err != nil {
					return err
				}
				// No Close: the client's Close is a COMMIT, which a reader
				// does not send.
				_, err = io.ReadFull(f, buf)
				return err
			}, close: done}
		}
		dir := fmt.Sprintf("%s-nfs%d", run, i)
		if _, err := v.Mkdir(dir, 0o755); err != nil {
			fail("nfs mkdir %s: %v", dir, err)
		}
		return loadClient{do: func(_ *rand.Rand, n int) error {
			f, err := v.OpenFile(dir+"/f"+strconv.Itoa(n), 0o644)
			if err != nil {
				return err
			}
			if _, err := f.Write(page); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		}, close: done}
	case "9p-read", "9p-write":
		root, done := attach9P(ninepAddr, uint32(os.Getuid()))
		if kinds[kind] == "9p-read" {
			buf := make([]byte, seedSize)
			return loadClient{do: func(r *rand.Rand, _ int) error {
				_, f, err := root.Walk([]string{"seed", fmt.Sprintf("r%02d.txt", r.IntN(Seeds))})
				if err != nil {
					return err
				}
				defer f.Close()
				if _, _, err := f.Open(p9.ReadOnly); err != nil {
					return err
				}
				_, err = f.ReadAt(buf, 0)
				return err
			}, close: done}
		}
		dir := fmt.Sprintf("%s-9p%d", run, i)
		if _, err := root.Mkdir(dir, 0o755, p9.NoUID, p9.NoGID); err != nil {
			fail("9p mkdir %s: %v", dir, err)
		}
		_, d, err := root.Walk([]string{dir})
		if err != nil {
			fail("9p walk %s: %v", dir, err)
		}
		return loadClient{do: func(_ *rand.Rand, n int) error {
			_, c, err := d.Walk(nil)
			if err != nil {
				return err
			}
			f, _, _, err := c.Create("f"+strconv.Itoa(n), p9.WriteOnly, 0o644, p9.NoUID, p9.NoGID)
			if err != nil {
				c.Close()
				return err
			}
			if _, err := f.WriteAt(page, 0); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		}, close: func() { d.Close(); done() }}
	case "query":
		return loadClient{do: func(r *rand.Rand, _ int) error {
			text := strings.Join(pick(r, 2+r.IntN(2)), " ")
			_, err := ctl.Query(context.Background(), client.QueryRequest{Text: text, Limit: 10, Rank: rank, Scope: scope})
			return err
		}, close: func() {}}
	default: // tag
		return loadClient{do: func(r *rand.Rand, _ int) error {
			_, err := ctl.Tag(context.Background(), client.TagRequest{
				Path: seedName(r.IntN(Seeds)), Task: strings.Join(pick(r, 3), " "),
				RelatedApps: []string{"mixload"},
			})
			return err
		}, close: func() {}}
	}
}

func seedName(i int) string { return fmt.Sprintf("seed/r%02d.txt", i) }

func pick(r *rand.Rand, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = words[r.IntN(len(words))]
	}
	return out
}

// seedFiles writes the Seeds files the readers read and the taggers tag: text
// of the words, so the content indexer and the queries have something to find.
func seedFiles(nfsAddr string) {
	v, done := mountNFS(nfsAddr, uint32(os.Getuid()))
	defer done()
	if _, err := v.Mkdir("seed", 0o755); err != nil {
		fail("seed mkdir: %v", err)
	}
	r := rand.New(rand.NewPCG(30, 7))
	for i := 0; i < Seeds; i++ {
		var b strings.Builder
		for b.Len() < seedSize {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		f, err := v.OpenFile(seedName(i), 0o644)
		if err != nil {
			fail("seed create: %v", err)
		}
		if _, err := f.Write([]byte(b.String()[:seedSize])); err != nil {
			fail("seed write: %v", err)
		}
		if err := f.Close(); err != nil {
			fail("seed commit: %v", err)
		}
	}
}

// mountNFS mounts the daemon's root export with the Go NFSv3 client, as uid.
func mountNFS(addr string, uid uint32) (*nfsc.Target, func()) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		fail("-nfs %s: %v", addr, err)
	}
	port, _ := strconv.Atoi(portStr)
	// Here, where every client of the load, the seeding and the package's
	// test is made: set in main only, the test's loads kept the 5 s timeout.
	semfstest.PatientNFSClient()
	cl, err := nfsc.DialServiceAtPort(host, port)
	if err != nil {
		fail("dial NFS %s: %v", addr, err)
	}
	m := &nfsc.Mount{Client: cl}
	v, err := m.Mount("/", rpc.NewAuthUnix("mixload", uid, uid).Auth())
	if err != nil {
		fail("mount %s: %v", addr, err)
	}
	return v, func() { m.Unmount(); cl.Close() }
}

// attach9P attaches "/" as the Linux kernel does (plain 9P2000.L, n_uname = uid).
func attach9P(addr string, uid uint32) (p9.File, func()) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		fail("dial 9P %s: %v", addr, err)
	}
	cl, err := p9.NewClient(v9fsconn.Wrap(conn, uid), p9.WithMessageSize(1<<20))
	if err != nil {
		fail("9P version: %v", err)
	}
	root, err := cl.Attach("/")
	if err != nil {
		fail("9P attach: %v", err)
	}
	return root, func() { root.Close(); cl.Close() }
}
