package semfstest

import (
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hugelgupf/p9/p9"
	"github.com/semfs/semfs/ninep/v9fsconn"
	nfsc "github.com/willscott/go-nfs-client/nfs"
	"github.com/willscott/go-nfs-client/nfs/rpc"
)

// patientNFSClient makes PatientNFSClient's change once per process.
var patientNFSClient sync.Once

// PatientNFSClient raises go-nfs-client's reply timeout (a variable of that
// package) to 2 minutes, once per process; call it before making a client.
// The client sends a call again after DefaultReadTimeout (5 s) without a
// reply, and a reply that comes after that blocks its reader for good (it
// sends on a channel nobody reads any more), so one slow reply on a loaded CI
// machine became 100 × 5 s of retries and "disconnected" (and, in the mixed
// load's driver, a run hung for 10 minutes). A slow reply must fail a test
// only where the test bounds it itself (integration's answers), and count as
// slow in a load.
func PatientNFSClient() {
	patientNFSClient.Do(func() { rpc.DefaultReadTimeout = 2 * time.Minute })
}

// MountNFS mounts export (e.g. "/@notes" or "/") on the daemon's NFS port with
// the Go NFSv3 client, sending AUTH_UNIX credentials for uid.
func (d *Daemon) MountNFS(t testing.TB, export string, uid uint32) *nfsc.Target {
	t.Helper()
	PatientNFSClient()
	host, portStr, err := net.SplitHostPort(d.NFS)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(portStr)
	cl, err := nfsc.DialServiceAtPort(host, port)
	if err != nil {
		t.Fatalf("dial NFS %s: %v", d.NFS, err)
	}
	m := &nfsc.Mount{Client: cl}
	v, err := m.Mount(export, rpc.NewAuthUnix("semfs-test", uid, uid).Auth())
	if err != nil {
		cl.Close()
		t.Fatalf("mount %s: %v", export, err)
	}
	t.Cleanup(func() { m.Unmount(); cl.Close() })
	return v
}

// Attach9P attaches aname on the daemon's 9P port as the Linux kernel does: a
// plain "9P2000.L" Tversion and n_uname = uid on Tattach (p9's client sends a
// Google-extended version and no uid, so a shim on the connection rewrites both).
func (d *Daemon) Attach9P(t testing.TB, aname string, uid uint32) p9.File {
	t.Helper()
	conn, err := net.Dial("tcp", d.NineP)
	if err != nil {
		t.Fatalf("dial 9P %s: %v", d.NineP, err)
	}
	cl, err := p9.NewClient(v9fsconn.Wrap(conn, uid), p9.WithMessageSize(1<<20))
	if err != nil {
		conn.Close()
		t.Fatalf("9P version: %v", err)
	}
	root, err := cl.Attach(aname)
	if err != nil {
		cl.Close()
		t.Fatalf("9P attach %q: %v", aname, err)
	}
	t.Cleanup(func() { root.Close(); cl.Close() })
	return root
}
