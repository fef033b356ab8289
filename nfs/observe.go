package nfs

import (
	"encoding/binary"

	"github.com/semfs/semfs/server"
)

// ObserveFunc is told of every answered call (server.ObserveFunc): the
// operation is "getattr", "read", … for NFSv3, "mnt", "umnt", "export", … for
// MOUNT, "other" for any other program or procedure; an error is an RPC-level
// refusal or an NFS status other than NFS3_OK; the time runs from the call's
// record being read to its reply's first bytes being written.
type ObserveFunc = server.ObserveFunc

// TrackFunc counts connections per app (the app an NFS mount names; "" for
// the root): server.TrackFunc.
type TrackFunc = server.TrackFunc

// observer pairs one connection's calls with their replies by xid. A nil
// *observer observes nothing.
type observer struct {
	fn    ObserveFunc
	calls server.Calls[uint32, callKind] // by xid
	apps  *server.ConnApps               // nil without a TrackFunc
}

type callKind struct{ prog, proc uint32 }

func newObserver(fn ObserveFunc, track TrackFunc) *observer {
	if fn == nil && track == nil {
		return nil
	}
	return &observer{fn: fn, apps: server.NewConnApps(track)}
}

// call notes a call record's arrival.
func (o *observer) call(r *request) {
	if o == nil || o.fn == nil || r == nil {
		return
	}
	o.calls.Start(r.xid, callKind{prog: r.prog, proc: r.proc})
}

// reply notes a reply whose record body starts with msg (xid first). Only as
// much as is given is read: a reply seen by its xid alone (a large READ passed
// through) counts as a success.
func (o *observer) reply(msg []byte) {
	if o == nil || o.fn == nil || len(msg) < 4 {
		return
	}
	c, took, ok := o.calls.Done(binary.BigEndian.Uint32(msg))
	if !ok {
		return
	}
	o.fn(procName(c.prog, c.proc), replyFailed(c.prog, msg), took)
}

// replyFailed reads reply_stat, accept_stat and, for NFS, the nfsstat3 that
// opens every result (RFC 5531, RFC 1813).
func replyFailed(prog uint32, msg []byte) bool {
	x := newXDRReader(msg)
	_ = x.uint32() // xid
	_ = x.uint32() // mtype
	replyStat := x.uint32()
	if !x.ok {
		return false
	}
	if replyStat != 0 {
		return true
	}
	_ = x.uint32()    // verifier flavor
	_ = x.opaque(400) // verifier body
	acceptStat := x.uint32()
	if !x.ok {
		return false
	}
	if acceptStat != 0 {
		return true
	}
	if prog != progNFS {
		return false
	}
	status := x.uint32()
	return x.ok && status != nfs3OK
}

// procName names a procedure; the set is closed so that a metric label cannot
// grow with what clients send.
func procName(prog, proc uint32) string {
	if prog == progMount {
		switch proc {
		case 0:
			return "mount_null"
		case mountProcMnt:
			return "mnt"
		case mountProcDump:
			return "dump"
		case 3:
			return "umnt"
		case mountProcUmntAll:
			return "umntall"
		case mountProcExport:
			return "export"
		}
		return "other"
	}
	if prog != progNFS {
		return "other"
	}
	names := [...]string{"null", "getattr", "setattr", "lookup", "access", "readlink", "read", "write",
		"create", "mkdir", "symlink", "mknod", "remove", "rmdir", "rename", "link", "readdir",
		"readdirplus", "fsstat", "fsinfo", "pathconf", "commit"}
	if int(proc) < len(names) {
		return names[proc]
	}
	return "other"
}

// app notes that the connection serves app (see server.ConnApps).
func (o *observer) app(app string) {
	if o != nil {
		o.apps.Add(app)
	}
}

// close releases the connection's apps. Called once the connection has ended.
func (o *observer) close() {
	if o != nil {
		o.apps.Close()
	}
}
