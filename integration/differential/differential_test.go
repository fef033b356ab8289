package differential_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hugelgupf/p9/p9"
	"github.com/semfs/semfs/integration/differential"
	"github.com/semfs/semfs/integration/semfstest"
	"github.com/semfs/semfs/ninep/v9fsconn"
)

// The step budget per protocol: CI runs the default; SEMFS_DIFFERENTIAL_STEPS
// runs longer, and SEMFS_DIFFERENTIAL_SEED starts elsewhere (or replays a
// failure's seed).
const (
	defaultSteps = 10000
	seqLen       = 150
)

func envInt(t *testing.T, name string, def uint64) uint64 {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, s, err)
	}
	return v
}

func TestNFSAgainstGanesha(t *testing.T) {
	requirePeers(t, "ganesha.nfsd", "rpcbind")
	dir := t.TempDir()
	export := filepath.Join(dir, "exp-ganesha")
	if err := os.Mkdir(export, 0o777); err != nil {
		t.Fatal(err)
	}
	nfsAddr, mountAddr := startGanesha(t, dir, export)
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off"})

	sc, su := dialNFS(t, d.NFS, 0), dialNFS(t, d.NFS, differential.User)
	sroot, err := sc.Mount("/")
	if err != nil {
		t.Fatal(err)
	}
	mc := dialNFS(t, mountAddr, 0)
	proot, err := mc.Mount(export)
	if err != nil {
		t.Fatal(err)
	}
	pc, pu := dialNFS(t, nfsAddr, 0), dialNFS(t, nfsAddr, differential.User)
	pair := differential.Pair{
		Proto: "nfs",
		Semfs: func(base string) (differential.Target, error) { return differential.NewNFSTarget(sc, su, sroot, base) },
		Peer:  func(base string) (differential.Target, error) { return differential.NewNFSTarget(pc, pu, proot, base) },
	}
	runSeeds(t, pair, d)
}

func dialNFS(t *testing.T, addr string, uid uint32) *differential.NFSClient {
	t.Helper()
	c, err := differential.DialNFS(addr, uid, uid)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestNinePAgainstDiod(t *testing.T) {
	requirePeers(t, "diod")
	dir := t.TempDir()
	export := filepath.Join(dir, "exp-diod")
	if err := os.Mkdir(export, 0o777); err != nil {
		t.Fatal(err)
	}
	// diod resolves paths from / as the caller: User must be able to
	// search the directories above the export (t.TempDir makes them 0700).
	for _, p := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	diodAddr := startDiod(t, dir, export)
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off"})
	sroot, suser := attach9P(t, d.NineP, "/", 0), attach9P(t, d.NineP, "/", differential.User)
	proot, puser := attach9P(t, diodAddr, export, 0), attach9P(t, diodAddr, export, differential.User)
	pair := differential.Pair{
		Proto: "9p",
		Semfs: func(base string) (differential.Target, error) { return differential.NewNinePTarget(sroot, suser, base) },
		Peer:  func(base string) (differential.Target, error) { return differential.NewNinePTarget(proot, puser, base) },
	}
	runSeeds(t, pair, d)
}

// attach9P attaches aname as uid with p9's client speaking plain 9P2000.L,
// as Linux's v9fs does (v9fsconn).
func attach9P(t *testing.T, addr, aname string, uid uint32) p9.File {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := p9.NewClient(v9fsconn.Wrap(conn, uid), p9.WithMessageSize(64<<10)) // diod answers EIO to larger reads
	if err != nil {
		conn.Close()
		t.Fatalf("9P version with %s: %v", addr, err)
	}
	root, err := cl.Attach(aname)
	if err != nil {
		cl.Close()
		t.Fatalf("9P attach %s %q: %v", addr, aname, err)
	}
	t.Cleanup(func() { root.Close(); cl.Close() })
	return root
}

// runSeeds runs sequences of seqLen steps, seed after seed, until the step
// budget is spent. A sequence ends at its first difference: one on the
// known-failures list is logged; any other is shrunk and fails the test
// with its seed and its shortest sequence found, and with what semfs logged
// as a warning or an error (a 9P connection the shim gave up on, say, on a
// machine stalled for seconds).
func runSeeds(t *testing.T, pair differential.Pair, d *semfstest.Daemon) {
	pair.Normalize = differential.Accepted(pair.Proto)
	// Each known failure must still show, or it has been fixed and leaves
	// the list (and its steps come back into the sequences).
	for i, k := range differential.KnownFailures() {
		if k.Proto != pair.Proto || k.Repro == nil {
			continue
		}
		diffs, _, err := pair.Run(fmt.Sprintf("known%d", i), k.Repro)
		if err != nil {
			t.Fatalf("known failure %q: %v", k.Signature, err)
		}
		if got := differential.Signature(pair.Proto, diffs); got != k.Signature {
			t.Errorf("known failure %q no longer shows (now: %q): remove it from KnownFailures if it was fixed\nrepro:\n%s",
				k.Signature, got, differential.Show(k.Repro))
		}
	}
	pair.Skip = differential.SkipKnown(pair.Proto)
	total := envInt(t, "SEMFS_DIFFERENTIAL_STEPS", defaultSteps)
	first := envInt(t, "SEMFS_DIFFERENTIAL_SEED", 1)
	failures := 0
	// At most total sequences, should known failures leave out every step.
	for seed, done := first, uint64(0); done < total && failures < 5 && seed-first < total; seed++ {
		ops := differential.Generate(seed, seqLen)
		diffs, ran, err := pair.Run(fmt.Sprintf("s%d", seed), ops)
		if err != nil {
			// The error comes last, after the steps: a log cut in its middle
			// keeps its beginning and its end.
			t.Fatalf("%s seed %d (SEMFS_DIFFERENTIAL_SEED=%d replays it) failed; steps run:\n%s%s%s seed %d: %v",
				pair.Proto, seed, seed, differential.Show(ran), warnings(d), pair.Proto, seed, err)
		}
		if len(diffs) == 0 {
			done += uint64(len(ran))
			continue
		}
		done += uint64(len(ran))
		sig := differential.Signature(pair.Proto, diffs)
		if k, ok := differential.Known(pair.Proto, sig); ok {
			t.Logf("%s seed %d: known failure at step %d (%s): %s", pair.Proto, seed, diffs[0].Step, diffs[0], k.Finding)
			continue
		}
		same := func(d []differential.Difference) bool { return differential.Signature(pair.Proto, d) == sig }
		min, minDiffs, err := pair.Shrink(fmt.Sprintf("s%d-shrink", seed), ran, same, 60*time.Second)
		if err != nil {
			t.Fatalf("%s seed %d: shrinking: %v", pair.Proto, seed, err)
		}
		var b strings.Builder
		for _, d := range minDiffs {
			fmt.Fprintf(&b, "  %s\n", d)
		}
		t.Errorf("%s seed %d (SEMFS_DIFFERENTIAL_SEED=%d replays it): semfs and the peer differ; signature %s\nshortest sequence found:\n%s%sdifferences:\n%s",
			pair.Proto, seed, seed, sig, differential.Show(min), warnings(d), b.String())
		failures++
	}
}

// warnings is what d logged at level WARN or ERROR, for a failure's message
// ("" when nothing).
func warnings(d *semfstest.Daemon) string {
	lines := d.LogLines("level=WARN", "level=ERROR")
	if len(lines) == 0 {
		return ""
	}
	return "semfs logged:\n  " + strings.Join(lines, "\n  ") + "\n"
}
