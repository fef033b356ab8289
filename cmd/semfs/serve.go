//go:build linux

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/content"
	"github.com/semfs/semfs/index/passage"
	"github.com/semfs/semfs/metrics"
	"github.com/semfs/semfs/nfs"
	"github.com/semfs/semfs/ninep"
	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/control"
	"github.com/semfs/semfs/server/feed"
	"github.com/semfs/semfs/server/meta"
	"github.com/semfs/semfs/server/policy"
	"github.com/semfs/semfs/server/snapshot"
)

// serveArgs are `semfs serve`'s flags.
type serveArgs struct {
	data, index, socket string // override BERTH_* env and the defaults
	nfsAddr             string // NFSv3 (MOUNT and NFS on one port); "off" disables
	ninepAddr           string // 9P2000.L over TCP; "off" disables
	ninepSocket         string // 9P2000.L over a Unix socket (trans=unix, QEMU virtio-serial)
	modelDir            string // USE-lite model directory; "off" runs keyword-only
	thresholds          string // per-model similarity thresholds, "model=0.25,other=0.3"
	logLevel            string
	writeQuiet          time.Duration
	limits              server.Limits       // every door: --idle-timeout, --body-timeout, --max-conns
	rebuildIndex        bool                // move records.db, vectors.db and bleve/ aside and rebuild them from the backing files alone
	metricsAddr         string              // also serve /metrics over TCP here (metrics.go); "" = control socket only
	metaDir             string              // the .semfs namespace's name in every export; "off" = none
	listMetaDir         bool                // list it in the root's listing too
	watch               server.WatchOptions // --watch, --watch-rescan, --watch-max (follow.go)
	policy              string              // --policy: per-app views and rights (servepolicy.go); "" = none
	changesKeep         int                 // --changes-keep: events the change feed keeps (feed.go)
	changesKeepFor      time.Duration       // --changes-keep-for: and for how long at most
	contentMax          int64               // --content-max: bigger files are not content-indexed (content.go)
	passageCPU          float64             // --passage-cpu: share of a core embedding passages may take (passages.go)
}

func runServe(ctx context.Context, env *cliEnv, args []string) int {
	var a serveArgs
	fs := newFlagSet(env, "serve", "[flags]")
	fs.StringVar(&a.data, "data", "", "backing directory (env "+envData+")")
	fs.StringVar(&a.index, "index", "", "index directory, beside the backing directory (env "+envIndex+")")
	fs.StringVar(&a.socket, "socket", "", "control socket (env "+envSocket+")")
	fs.StringVar(&a.nfsAddr, "nfs", "127.0.0.1:2049", "NFSv3 listen address (MOUNT and NFS share it), or off")
	fs.StringVar(&a.ninepAddr, "9p", "127.0.0.1:5640", "9P2000.L TCP listen address, or off")
	fs.StringVar(&a.ninepSocket, "9p-socket", "", "also serve 9P2000.L on this Unix socket")
	fs.StringVar(&a.modelDir, "model-dir", "", "USE-lite model directory (env "+envModel+"), or off for keyword-only search")
	fs.StringVar(&a.thresholds, "threshold", "", "similarity thresholds per model, e.g. all-MiniLM-L6-v2=0.2,use-lite=0.3")
	fs.StringVar(&a.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.DurationVar(&a.writeQuiet, "write-quiet", time.Second, "how long a written file stays quiet before its updatedAt is indexed")
	fs.DurationVar(&a.limits.IdleTimeout, "idle-timeout", server.DefaultIdleTimeout, "close an NFS or control connection with no request in progress this long (9P: one not yet attached); negative: never")
	fs.DurationVar(&a.limits.BodyTimeout, "body-timeout", server.DefaultBodyTimeout, "a request must arrive whole this long after its first byte (all doors); negative: never")
	fs.BoolVar(&a.rebuildIndex, "rebuild-index", false, "move the index's records.db, vectors.db and bleve/ aside and rebuild them from the backing files' durable records alone (accepts losing what only the index held)")
	fs.IntVar(&a.limits.MaxConns, "max-conns", server.DefaultMaxConns, "connections served at once per listener (NFS, 9P, control); negative: no cap")
	fs.StringVar(&a.metricsAddr, "metrics", "", "also serve Prometheus metrics at http://ADDR/metrics, e.g. 127.0.0.1:9464 (always at GET /v1/metrics on the control socket)")
	fs.StringVar(&a.metaDir, "meta-dir", meta.DefaultName, "name of the query and tag namespace at the root of every export (docs/inside-the-mount.md), or off")
	fs.BoolVar(&a.listMetaDir, "list-meta-dir", false, "list the --meta-dir directory in the root's listing (by default it is reachable by name only, so find, du and backups skip it)")
	fs.StringVar(&a.watch.Mode, "watch", server.WatchInotify, "follow changes host processes make in the backing directory: inotify (rescans when it cannot), scan (rescan every --watch-rescan) or off (next start only)")
	fs.DurationVar(&a.watch.Rescan, "watch-rescan", server.DefaultWatchRescan, "how often --watch=scan (or inotify's fallback) rescans the backing directory")
	fs.Int64Var(&a.contentMax, "content-max", content.DefaultMax, "files bigger than this many bytes are not content-indexed (grep reads them with all)")
	fs.Float64Var(&a.passageCPU, "passage-cpu", passage.DefaultCPU, "share of one core the background embedding of passages may take (0 < x <= 1; negative: passages by words only)")
	fs.IntVar(&a.watch.MaxWatches, "watch-max", 0, "at most this many inotify watches (one per directory), then fall back to rescans; 0: the kernel's limit")
	fs.StringVar(&a.policy, "policy", "", "per-app views and rights: a JSON policy file (docs/policy.md), reloaded on SIGHUP or when it changes")
	fs.IntVar(&a.changesKeep, "changes-keep", feed.DefaultKeep, "the change feed (GET /v1/changes) keeps at most this many events; older cursors answer reset")
	fs.DurationVar(&a.changesKeepFor, "changes-keep-for", feed.DefaultKeepFor, "and none older than this")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.stderr, "semfs serve: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	switch a.watch.Mode {
	case server.WatchInotify, server.WatchScan, server.WatchOff:
	default:
		fmt.Fprintf(env.stderr, "semfs serve: --watch: %q is not inotify, scan or off\n", a.watch.Mode)
		return exitUsage
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(a.logLevel)); err != nil {
		fmt.Fprintf(env.stderr, "semfs serve: --log-level: %v\n", err)
		return exitUsage
	}
	log := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: level}))
	pol, code := loadPolicy(env, a.policy, log)
	if code != exitOK {
		return code
	}
	thresholds, err := embed.ParseThresholds(a.thresholds)
	if err != nil {
		fmt.Fprintf(env.stderr, "semfs serve: --threshold: %v\n", err)
		return exitUsage
	}
	stopProfile, err := startProfiles()
	if err != nil {
		fmt.Fprintf(env.stderr, "semfs serve: %v\n", err)
		return exitUsage
	}
	defer stopProfile()
	d := &daemon{args: a, log: log, pol: pol, paths: resolve(a.data, a.index, a.socket), listeners: map[string]string{}}
	if err := d.paths.check(); err != nil {
		fmt.Fprintf(env.stderr, "semfs serve: %v\n", err)
		return exitUsage
	}
	if err := d.start(ctx, thresholds); err != nil {
		log.Error("semfs could not start", "err", err)
		d.stop()
		return exitFailed
	}
	fmt.Fprintf(env.stdout, "semfs %s serving %s\n", version, d.paths.Data)
	fmt.Fprintf(env.stdout, "  control socket  %s\n", d.paths.Socket)
	for _, k := range []string{"nfs", "9p", "9p-unix"} {
		if v, ok := d.listeners[k]; ok {
			fmt.Fprintf(env.stdout, "  %-15s %s\n", k, v)
		}
	}
	fmt.Fprintf(env.stdout, "  index           %s\n", d.paths.Index)
	if f, ok := env.stdout.(*os.File); ok {
		f.Sync()
	}
	err = d.wait(ctx)
	d.stop()
	if err != nil {
		log.Error("semfs stopped on an error", "err", err)
		return exitFailed
	}
	log.Info("semfs stopped cleanly")
	return exitOK
}

// daemon is one running semfs: the core, the index, and the listeners.
type daemon struct {
	args      serveArgs
	log       *slog.Logger
	paths     paths
	started   time.Time
	reconcile string

	bgCancel context.CancelFunc // stops the background start-up reconcile
	bgDone   sync.WaitGroup     // the background start-up reconcile

	reg *server.Registry
	idx *index.Index
	// model is the in-process model as loaded (timed by the metrics), or
	// nil: the index embeds through a cache and a Coalescer in front of it
	// (serve), the passage index through a cache of its own (openPassages).
	model   embed.Embedder
	queue   *server.Batcher // the change stream into the index
	fs      *server.FS
	watch   *server.Watcher // changes host processes make in the backing directory (follow.go)
	feed    *feed.Log       // the change feed's history (feed.go)
	dirs    *feed.HostDirs  // the directories, for host changes to them (feed.go)
	sizes   *feed.Sizes     // files' sizes at clients' last changes, for host truncates (feed.go)
	content *content.Index  // grep's trigram index (content.go)
	ctl     *control.Server
	nfs     *nfs.Server
	ninep   *ninep.Server

	passages *passage.Index // meaning over contents (passages.go)

	pol        *policy.Live     // --policy; nil without it
	stopPolicy func()           // ends the policy's reload watch
	metrics    *metrics.Metrics // this daemon's registry (metrics.go)
	metricsSrv *http.Server     // --metrics; nil without it

	mu        sync.Mutex
	listeners map[string]string
	errc      chan error
	wg        sync.WaitGroup
}

func (d *daemon) start(ctx context.Context, thresholds map[string]float64) error {
	d.started = time.Now()
	if os.Getenv("GOGC") == "" {
		// Opening the index allocates about 0.7 GB at 100k tagged files,
		// most of it kept; at the default GOGC the collector runs a cycle
		// each time the heap doubles on the way up, on the cores the load
		// needs. Fewer cycles until the daemon serves, then the default (or
		// the user's GOGC, left alone).
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	d.errc = make(chan error, 4)
	if err := os.MkdirAll(d.paths.Data, 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(d.paths.Index, 0o700); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(d.paths.Socket), 0o755); err != nil {
		return err
	}
	var err error
	if d.reg, err = server.OpenRegistry(filepath.Join(d.paths.Index, "registry.json")); err != nil {
		return err
	}
	d.metrics = metrics.New()
	if d.pol != nil {
		d.pol.Denied = d.metrics.PolicyDenied
	}
	// The model loads on its own goroutine while the index loads its records,
	// vectors and Bleve; Open takes it once both are done (EmbedderFrom), so no
	// query ever runs before the model is in (or known to be missing).
	model := make(chan embed.Embedder, 1)
	// The metrics time the model itself: the cache's hits are no forward
	// pass. d.model is set before the send, which index.Open waits for, so
	// openPassages (after it) sees it.
	go func() {
		d.model = d.metrics.Embedder(d.loadModel())
		var e embed.Embedder
		if d.model != nil {
			// Queries repeat (a user refines a search, an agent polls): a
			// cache hit skips the forward pass. Queries and tags embed one
			// short text each, and concurrent ones share a forward pass
			// (embed.Coalescer).
			e = embed.NewCached(embed.NewCoalescer(d.model, joinTexts), 1024)
		}
		model <- e
	}()
	if d.args.rebuildIndex {
		moved, err := index.MoveAside(d.paths.Index, "before-rebuild")
		if err != nil {
			return err
		}
		d.log.Warn("--rebuild-index: index moved aside; rebuilding it from the backing files", "moved", moved)
	}
	opts := indexOptions(nil, thresholds, d.log)
	opts.Saver = (*recordSaver)(d)
	opts.EmbedderFrom = func() embed.Embedder { return <-model }
	opts.Tagged = d.recordTags
	if d.idx, err = index.Open(d.paths.Index, opts); err != nil {
		return fmt.Errorf("opening the index at %s: %w", d.paths.Index, err)
	}
	if err := d.openContent(); err != nil {
		return err
	}
	if err := d.openPassages(); err != nil {
		return err
	}
	if err := d.openFeed(); err != nil {
		return err
	}
	var tree *meta.Tree
	var virt server.Virtual
	if d.args.metaDir != "off" {
		// Sync: d.queue is made just below, before any call can reach the tree.
		if tree, err = meta.New(meta.Options{Name: d.args.metaDir, Index: d.idx, Sync: d.sync, Changes: d.recentChanges, Grep: d.grep, Contents: d.contents}); err != nil {
			return fmt.Errorf("--meta-dir: %w", err)
		}
		virt = tree
	}
	d.queue = server.NewBatcher(func(ctx context.Context, cs []server.Change) error {
		d.contentChanges(cs)
		err := applyChanges(d.idx, d.log, cs)
		d.recordChanges(cs) // the changes happened, whatever the index made of them
		return err
	}, 4096, d.log)
	if d.fs, err = server.New(d.paths.Data, server.Options{Sink: (*changeSink)(d), Registry: d.reg, Logger: d.log,
		WriteQuiet: d.args.writeQuiet, Journal: journalPath(d.paths.Index),
		Virtual: virt, ListVirtual: d.args.listMetaDir, Policy: d.pol}); err != nil {
		return err
	}
	if tree != nil {
		tree.Attach(d.fs)
		if d.fs.VirtualShadowed() {
			d.log.Warn("a real file in the backing directory bears the --meta-dir name: clients see the semfs namespace there instead, and the file is not indexed; rename it on the host or choose another --meta-dir",
				"path", filepath.Join(d.paths.Data, d.args.metaDir))
		}
	}
	if mi := d.fs.MetaInfo(); !mi.Xattr {
		d.log.Warn("the backing file system takes no user extended attributes: every file's durable record goes to the journal beside the index",
			"journal", mi.Journal.Path)
	}
	// The start-up reconcile runs in the background, while clients are
	// served, when the index opened sound and no durable record lives in the
	// journal only (see backgroundReconcile); otherwise before serving, as it
	// must: a damaged or new index is recovered before anyone reads it.
	bg := d.backgroundReconcile()
	var guard *index.Guard
	if bg == "" {
		if err := d.followBacking(ctx, nil); err != nil {
			return err
		}
	} else {
		d.reconcile = "in progress, in the background"
		// Taken before the walk starts and before any client is served: every
		// record a client changes from now on is newer than the walk.
		guard = d.idx.Guard()
	}
	d.ctl = control.New(control.Options{
		FS: d.fs, Index: d.idx, Registry: d.reg, Logger: d.log, Limits: d.args.limits, Policy: d.pol, Contents: d.contents,
		Health:  d.health,
		Grep:    d.grep,
		Sync:    d.sync,
		Metrics: d.metrics.Handler(),
		Observe: d.observeControl,
		Changes: d.feed, ChangesView: d.changesView,
		Snapshot: func(ctx context.Context, w io.Writer, _ func(int64)) error {
			return snapshot.Write(ctx, w, d.fs, d.idx, d.reg)
		},
	})
	if err := d.ctl.Listen(d.paths.Socket); err != nil {
		return err
	}
	d.goServe("control", d.ctl.Serve)
	d.stopPolicy = d.watchPolicy()
	if d.args.nfsAddr != "off" {
		if d.nfs, err = nfs.NewServer(d.fs, nfs.Options{StateDir: d.paths.Index, Logger: d.log, Limits: d.args.limits, Observe: d.observer("nfs"), Track: d.tracker("nfs")}); err != nil {
			return err
		}
		ln, err := net.Listen("tcp", d.args.nfsAddr)
		if err != nil {
			return fmt.Errorf("NFS listener: %w", err)
		}
		d.listeners["nfs"] = ln.Addr().String()
		d.goServe("nfs", func() error { return d.nfs.Serve(ln) })
	}
	if d.args.ninepAddr != "off" || d.args.ninepSocket != "" {
		d.ninep = ninep.NewServer(d.fs, ninep.Options{Logger: d.log, Limits: d.args.limits, Observe: d.observer("9p"), Track: d.tracker("9p")})
	}
	if d.args.ninepAddr != "off" {
		ln, err := net.Listen("tcp", d.args.ninepAddr)
		if err != nil {
			return fmt.Errorf("9P listener: %w", err)
		}
		d.listeners["9p"] = ln.Addr().String()
		d.goServe("9p", func() error { return d.ninep.Serve(ln) })
	}
	if d.args.ninepSocket != "" {
		if fi, err := os.Lstat(d.args.ninepSocket); err == nil && fi.Mode()&os.ModeSocket != 0 {
			os.Remove(d.args.ninepSocket) // stale from a crash; a live one fails the listen below
		}
		ln, err := net.Listen("unix", d.args.ninepSocket)
		if err != nil {
			return fmt.Errorf("9P unix listener: %w", err)
		}
		d.listeners["9p-unix"] = d.args.ninepSocket
		d.goServe("9p-unix", func() error { return d.ninep.Serve(ln) })
	}
	if err := d.startMetrics(); err != nil {
		return err
	}
	if guard != nil {
		bgCtx, cancel := context.WithCancel(ctx)
		d.bgCancel = cancel
		d.bgDone.Add(1)
		go func() {
			defer d.bgDone.Done()
			err := d.followBacking(bgCtx, guard)
			if err == nil {
				return
			}
			guard.Close()
			if bgCtx.Err() != nil {
				return // stopping
			}
			// As a failed start-up reconcile does in the foreground: the
			// daemon stops rather than serve an index it could not check.
			select {
			case d.errc <- fmt.Errorf("start-up reconcile (in the background): %w", err):
			default:
			}
		}()
		d.log.Info("reconciling the index with the backing directory in the background; queries answer from the index as it was saved", "why", bg)
	}
	d.log.Info("semfs started", "data", d.paths.Data, "index", d.paths.Index, "socket", d.paths.Socket,
		"nfs", d.listeners["nfs"], "9p", d.listeners["9p"], "9p-unix", d.listeners["9p-unix"],
		"startup", time.Since(d.started).Round(time.Millisecond))
	return nil
}

func (d *daemon) goServe(name string, serve func() error) {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		if err := serve(); err != nil {
			d.errc <- fmt.Errorf("%s: %w", name, err)
		}
	}()
}

func (d *daemon) wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		d.log.Info("shutting down")
		return nil
	case err := <-d.errc:
		return err
	}
}

// stop closes listeners first (no new work), then the core (flushing pending
// updatedAt changes into the index), then the index.
func (d *daemon) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// A stop that hangs says where, every 10 s, so that an operator (or a
	// test's log) sees which part did not let go.
	var closing atomic.Value
	closing.Store("the control socket")
	slow := time.NewTicker(10 * time.Second)
	defer slow.Stop()
	stopped := make(chan struct{})
	defer close(stopped)
	go func() {
		for {
			select {
			case <-stopped:
				return
			case <-slow.C:
				d.log.Warn("shutdown is slow", "closing", closing.Load())
			}
		}
	}()
	if d.ctl != nil {
		d.ctl.Shutdown(ctx)
	}
	closing.Store("the policy watcher")
	if d.stopPolicy != nil {
		d.stopPolicy()
	}
	closing.Store("the metrics listener")
	d.stopMetrics(ctx)
	closing.Store("the NFS server")
	if d.nfs != nil {
		d.nfs.Close()
	}
	closing.Store("the 9P server")
	if d.ninep != nil {
		d.ninep.Close()
	}
	if d.args.ninepSocket != "" {
		os.Remove(d.args.ninepSocket)
	}
	closing.Store("the background work")
	if d.bgCancel != nil {
		d.bgCancel()
	}
	d.bgDone.Wait()
	closing.Store("the backing directory watcher")
	if d.watch != nil {
		d.watch.Close()
	}
	closing.Store("the file system core")
	if d.fs != nil {
		d.fs.Close()
	}
	closing.Store("the update queue")
	if d.queue != nil {
		d.queue.Close()
	}
	closing.Store("the passage index")
	d.closePassages()
	closing.Store("the content index")
	if d.content != nil {
		if err := d.content.Close(); err != nil {
			d.log.Error("closing the content index", "err", err)
		}
	}
	closing.Store("the change log")
	if d.feed != nil {
		d.saveDirs()
		if err := d.feed.Close(); err != nil {
			d.log.Error("closing the change log", "err", err)
		}
	}
	closing.Store("the tag index")
	if d.idx != nil {
		if err := d.idx.Close(); err != nil {
			d.log.Error("closing the index", "err", err)
		}
	}
}

// joinTexts is how many texts one forward pass of queries' and tags' joins
// (embed.Coalescer): enough for every query and tag client of a busy host to
// share a pass, few enough (a few hundred tokens) that the pass stays within
// tens of ms. Joined, a query of two or three words costs half the CPU it
// costs alone with fp32 weights, and about three quarters with the AVX2 bf16
// ones (BenchmarkEmbedConcurrent, BENCHMARKS.md).
const joinTexts = 32

// loadModel loads the in-process embedder. A missing or broken model is not
// fatal: search runs keyword-only, and the reason is logged once here and shown
// by `semfs status`.
func (d *daemon) loadModel() embed.Embedder {
	if d.args.modelDir == "off" {
		d.log.Warn("semantic search is off (--model-dir off); queries are keyword-only")
		return nil
	}
	dir, source := embed.ResolveModelDir(d.args.modelDir)
	t0 := time.Now()
	e, err := embed.LoadUSELite(dir)
	if err != nil {
		d.log.Warn("no embedding model loaded; queries are keyword-only until one is installed (bash embed/model/fetch.sh)",
			"dir", dir, "from", source, "err", err)
		return nil
	}
	d.log.Info("embedding model loaded", "model", e.Name(), "dims", e.Dims(), "threshold", e.Threshold(),
		"dir", dir, "from", source, "took", time.Since(t0).Round(time.Millisecond))
	return e
}

// indexState is what the index is reconciled against for the regular file or
// symlink p with attributes a: its identity, size and mtime (its durable
// record is read after the walk: withRecords). The index keeps an opaque
// file identity in Ino: inode plus birth time, so a reused inode is not
// taken for a rename.
func indexState(p string, a server.Attr) index.FileState {
	return index.FileState{Path: p, Ino: a.FileID(), Size: a.Size, ModTime: a.Mtime, Mode: server.UnixPerm(a.Mode)}
}

// withRecords reads the durable record of each of files (indexState's, of a
// walk) into its Saved (nil when it has none), a directory at a time after
// the walk (FS.ReadMetaEach), and returns the files keep keeps, in their
// order (files' array reused). keep is called with i, where the record came
// from, and why it could not be read (an unreadable record leaves files[i]
// usable without it: each caller decides what that means), in the order of
// files grouped by directory.
func (d *daemon) withRecords(ctx context.Context, files []index.FileState, keep func(i int, src server.MetaSource, err error) bool) []index.FileState {
	paths := make([]string, len(files))
	for i := range files {
		paths[i] = files[i].Path
	}
	kept := make([]bool, len(files))
	d.fs.ReadMetaEach(ctx, paths, func(i int, m server.Meta, src server.MetaSource, err error) {
		if err == nil && src != server.MetaNone {
			saved := savedOf(m)
			files[i].Saved = &saved
		}
		kept[i] = keep(i, src, err)
	})
	out := files[:0]
	for i, ok := range kept {
		if ok {
			out = append(out, files[i])
		}
	}
	return out
}

// reconcileIndex brings the index in line with the backing directory, which may
// have changed while the daemon was down, and with the files' durable records
// (creator, tags), which the index is a cache of: after a damaged or lost
// index they are what it is rebuilt from. It refuses to start when the index
// lost records the backing files cannot give back (checkRecoverable).
//
// With guard (a background start-up reconcile, clients served meanwhile),
// the paths clients changed since the guard was taken are left alone (see
// index.Guard), and nothing of the walk is taken as proof that a file is gone
// from the journal (saveUnsaved).
func (d *daemon) reconcileIndex(ctx context.Context, guard *index.Guard) error {
	t0 := time.Now()
	var walked []index.FileState // the regular files and symlinks, their records read after the walk
	scan := &durableScan{from: map[string]server.MetaSource{}, live: map[uint64]bool{}}
	since := d.content.Begin()
	psince := d.passagesBegin()
	var texts []content.FileStat
	dirs := map[string]uint64{}
	modes := map[string]uint32{}
	err := d.fs.Walk(ctx, "", func(p string, a server.Attr) error {
		if a.IsDir() {
			dirs[p], modes[p] = a.FileID(), server.UnixPerm(a.Mode)
			return nil
		}
		if fs, ok := contentStat(p, a); ok {
			texts = append(texts, fs)
		}
		scan.live[a.FileID()] = true
		if a.Mode.IsRegular() || a.IsSymlink() {
			walked = append(walked, indexState(p, a))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("walking the backing directory: %w", err)
	}
	var failed error
	files := d.withRecords(ctx, walked, func(i int, src server.MetaSource, err error) bool {
		p := walked[i].Path
		switch {
		case failed != nil:
			return false
		case err != nil && server.KindOf(err) == server.KindNotFound:
			return false // removed while walking
		case err != nil && server.KindOf(err) == server.KindInvalid:
			scan.unreadable = append(scan.unreadable, p)
			d.log.Warn("unreadable durable record; the index's record is kept", "path", p, "err", err)
		case err != nil:
			failed = err
			return false
		case src != server.MetaNone:
			scan.from[p] = src
			if src == server.MetaFromXattr {
				scan.xattr++
			} else {
				scan.journal++
			}
		}
		return true
	})
	if failed != nil {
		return fmt.Errorf("reading the durable records: %w", failed)
	}
	d.content.Reconcile(since, nil, texts)
	d.passagesReconcile(psince, nil, texts)
	if err := d.checkRecoverable(scan); err != nil {
		return err
	}
	var rep index.ReconcileReport
	skipped := 0
	if guard != nil {
		rep, skipped, err = guard.Reconcile(files)
	} else {
		rep, err = d.idx.Reconcile(files)
	}
	if err != nil {
		return fmt.Errorf("reconciling the index: %w", err)
	}
	d.logRecovery(rep, scan, time.Since(t0))
	// A new history has no cursor to continue: clients list the tree
	// anyway, and a rebuilt index would make every file a "create".
	d.recordHost(ctx, []string{""}, hostDirs{dirs, modes}, rep, d.feed != nil && d.feed.Fresh() == "")
	if err := d.saveUnsaved(ctx, rep, scan, guard == nil); err != nil {
		return err
	}
	d.mu.Lock()
	d.reconcile = fmt.Sprintf("%+v", rep)
	d.mu.Unlock()
	d.log.Info("index reconciled with the backing directory", "files", len(files), "report", rep.String(),
		"background", guard != nil, "leftToClients", skipped, "took", time.Since(t0).Round(time.Millisecond))
	return nil
}

// backgroundReconcile says why the start-up reconcile may run while clients
// are served, or "" when it must run first: when the index lost records
// (damaged, missing, or new while the backing files carry durable records)
// they are recovered before anyone reads it, and --rebuild-index asks for
// exactly that; when the journal holds durable records, the walk is what
// decides which of them belong to files that are gone (CompactJournal), which
// is only sound before any client can create or rename a file.
func (d *daemon) backgroundReconcile() string {
	dmg := d.idx.Damage()
	switch {
	case d.args.rebuildIndex, dmg.RecordsDamaged(), dmg.New:
		return ""
	case d.fs.MetaInfo().Journal.Records > 0:
		return ""
	}
	return "index sound at open, journal empty"
}

// followBacking brings the index in step with the backing directory and then keeps
// it there: the watches first, then the walk of the start-up reconcile (with
// guard when clients are served meanwhile), then the watches' handling. A
// change made during the walk is seen by one or the other, and the two cannot
// race, since handling starts after the walk.
func (d *daemon) followBacking(ctx context.Context, guard *index.Guard) error {
	wo := d.args.watch
	wo.Logger = d.log
	w, err := d.fs.Watch(wo, d.follow)
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.watch = w
	d.mu.Unlock()
	if err := d.reconcileIndex(ctx, guard); err != nil {
		return err
	}
	w.Run()
	d.log.Info("following changes made directly in the backing directory", "mode", w.Mode(), "watches", w.Stats().Watches)
	return nil
}

func (d *daemon) health() control.Health {
	d.mu.Lock()
	defer d.mu.Unlock()
	l := make(map[string]string, len(d.listeners))
	for k, v := range d.listeners {
		l[k] = v
	}
	return control.Health{
		Version: version, StartedAt: d.started, DataDir: d.paths.Data, IndexDir: d.paths.Index,
		Socket: d.paths.Socket, Listeners: l, LastReconcile: d.reconcile, Watch: d.watchState(), Passages: d.passageStats(),
		Content: d.contentStats(),
		Changes: d.feedStats(),
	}
}

// changeSink is the core's change stream as the daemon consumes it: the NFS
// handle map learns of renames and removes made over 9P at once (a handle must
// not go stale in between), and the index through the batching queue.
type changeSink daemon

func (s *changeSink) Apply(ctx context.Context, c server.Change) error {
	if s.nfs != nil {
		if err := s.nfs.Apply(ctx, c); err != nil {
			s.log.Warn("NFS handle map update failed", "op", c.Op.String(), "path", c.Path, "err", err)
		}
	}
	return s.queue.Apply(ctx, c)
}

func (s *changeSink) Flush(ctx context.Context) error { return s.queue.Flush(ctx) }

// FlushHere is the queue's (server.HereFlusher): File.Sync applies what is
// queued on its own goroutine.
func (s *changeSink) FlushHere(ctx context.Context) error { return s.queue.FlushHere(ctx) }

// Ready is the queue's (server.ReadySink): the NFS handle map is not touched by
// the creates and writes the core asks about, only by renames and removes.
func (s *changeSink) Ready() bool { return s.queue.Ready() }

// applyChanges feeds a batch of the core's change stream into the index in one
// transaction.
func applyChanges(idx *index.Index, log *slog.Logger, cs []server.Change) error {
	batch := make([]index.Change, 0, len(cs))
	for _, c := range cs {
		ic := index.Change{Path: c.Path, NewPath: c.NewPath, CreatedBy: c.App, Ino: c.Ino, Mode: c.Mode, At: c.Time}
		switch c.Op {
		case server.ChangeCreate:
			ic.Op = index.OpCreate
		case server.ChangeWrite:
			ic.Op = index.OpTouch
		case server.ChangeSetTimes:
			ic.Op = index.OpTouch // a touch: the mtime moved, as a write's does
			if !c.Mtime.IsZero() {
				ic.Left = &index.Left{Size: c.Size, ModTime: c.Mtime}
			}
		case server.ChangeRename:
			ic.Op = index.OpRename
		case server.ChangeRemove:
			ic.Op = index.OpRemove
		case server.ChangeSetMode:
			if c.IsDir {
				continue // the index keeps no record of directories
			}
			ic.Op = index.OpMode
		case server.ChangeMkdir:
			continue // the index keeps no record of it (the change feed does)
		default:
			return fmt.Errorf("unknown change %v", c.Op)
		}
		batch = append(batch, ic)
	}
	if len(batch) == 0 {
		return nil
	}
	// Skipped changes are expected: a write to a file removed while still open
	// has no record left to touch.
	skipped, err := idx.Apply(batch)
	log.Debug("index applied changes", "changes", len(batch), "skipped", skipped, "first", batch[0].Path, "err", err)
	return err
}

// indexOptions lists every model whose vectors the index accepts: the known
// client-side models, the in-process one, with --threshold overrides.
func indexOptions(emb embed.Embedder, thresholds map[string]float64, log *slog.Logger) index.Options {
	models := embed.KnownModels()
	if emb != nil {
		found := false
		for _, m := range models {
			found = found || m.Name == emb.Name()
		}
		if !found {
			models = append(models, embed.Model{Name: emb.Name(), Dims: emb.Dims(), Threshold: emb.Threshold()})
		}
	}
	models = embed.ApplyThresholds(models, thresholds)
	if log == nil {
		log = slog.Default()
	}
	return index.Options{Embedder: emb, Models: models, Logger: log}
}
