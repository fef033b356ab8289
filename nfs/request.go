package nfs

import (
	"encoding/binary"
	"errors"

	"github.com/semfs/semfs/server"
)

// errEmptyName is a LOOKUP of the empty name.
var errEmptyName = errors.New("no entry has the empty name")

// RPC programs and NFSv3 procedures (RFC 1813) the record stream looks at.
const (
	progNFS   = 100003
	progMount = 100005

	mountProcMnt     = 1
	mountProcDump    = 2
	mountProcUmntAll = 4
	mountProcExport  = 5

	procNull        = 0
	procGetattr     = 1
	procSetattr     = 2
	procLookup      = 3
	procAccess      = 4
	procRead        = 6
	procWrite       = 7
	procCreate      = 8
	procMkdir       = 9
	procSymlink     = 10
	procMknod       = 11
	procRemove      = 12
	procRmdir       = 13
	procRename      = 14
	procLink        = 15
	procReaddirplus = 17
	procFsinfo      = 19
	procCommit      = 21

	authUnix = 1

	stableUnstable = 0

	createUnchecked = 0
	createGuarded   = 1
	createExclusive = 2

	timeDontChange  = 0
	timeServer      = 1
	timeClient      = 2
	maxHandleOpaque = 64 // NFS3_FHSIZE
)

// NFSv3 status codes (nfsstat3) the adapter puts into replies itself.
const (
	nfs3OK          = 0
	nfs3ErrIO       = 5
	nfs3ErrBadHandl = 10001
	nfs3ErrStale    = 70
)

// request is what the record stream learned about one RPC call from its
// header: the caller's AUTH_UNIX credentials, a name the core refuses, the
// EXCLUSIVE verifier. Lifetime: created when the call's record is read, used
// while the call is answered (on the reading goroutine, a worker or a COMMIT
// goroutine), and for MOUNT while go-nfs serves it.
type request struct {
	xid        uint32
	prog, proc uint32
	vers       uint32
	argsOff    int // where the procedure's arguments start in the record body
	uid, gid   uint32
	hasUID     bool
	gids       [16]uint32 // AUTH_UNIX's supplementary gids (at most 16, RFC 5531), gids[:ngids]
	ngids      int

	createHow uint32  // CREATE: UNCHECKED, GUARDED or EXCLUSIVE
	verf      [8]byte // CREATE EXCLUSIVE: the client's verifier
	badName   error   // a component name the core refuses; every handle lookup of the call fails with it

	// Set while the call is served, read by the reply rewriter.
	override uint32 // nfsstat3 of the failure recorded where it happened (fail, pathError); 0: none yet
}

// isNFS says the adapter answers this call itself (dispatch.go): every NFSv3
// procedure does; go-nfs answers only MOUNT.
func (r *request) isNFS() bool {
	return r.prog == progNFS && r.vers == 3 && r.argsOff != 0 && r.proc <= nfsProcMax
}

// fail records the status an error reply to this call must carry.
func (r *request) fail(status uint32) {
	if r != nil {
		r.override = status
	}
}

// parseCall decodes an RPC call record body (without the record mark) far enough
// to fill a request. rewritten is non-nil when go-nfs must see different
// arguments (CREATE EXCLUSIVE, LINK); whole says body is the entire record, which
// rewriting requires.
func parseCall(body []byte, whole bool) (r *request, rewritten []byte) {
	x := newXDRReader(body)
	r = &request{xid: x.uint32()}
	if x.uint32() != 0 { // not a CALL
		return r, nil
	}
	_ = x.uint32() // rpcvers
	r.prog = x.uint32()
	vers := x.uint32()
	r.vers = vers
	r.proc = x.uint32()
	flavor := x.uint32()
	cred := x.opaque(400)
	_ = x.uint32() // verifier flavor
	_ = x.opaque(400)
	if !x.ok {
		return r, nil
	}
	if flavor == authUnix {
		c := newXDRReader(cred)
		_ = c.uint32()    // stamp
		_ = c.opaque(255) // machinename
		uid, gid := c.uint32(), c.uint32()
		if c.ok {
			r.uid, r.gid, r.hasUID = uid, gid, true
		}
		// A malformed gids list keeps the uid and gid: a root daemon then
		// checks with no supplementary groups, which grants less, never more.
		if n := c.uint32(); c.ok && n <= uint32(len(r.gids)) {
			for i := range int(n) {
				r.gids[i] = c.uint32()
			}
			if c.ok {
				r.ngids = int(n)
			}
		}
	}
	argsOff := x.off
	r.argsOff = argsOff
	if r.prog == progMount && r.proc == mountProcMnt && whole {
		if dirpath := x.opaque(1024); x.ok && len(dirpath) == 0 {
			// go-nfs v0.0.4 cannot read an empty opaque (its ReadOpaque fails
			// on a zero-length read) and answers an RPC error; libnfs sends ""
			// for nfs://host/file. The empty export path means the root.
			out := append([]byte(nil), body[:argsOff]...)
			return r, appendOpaque(out, []byte("/"))
		}
		return r, nil
	}
	if r.prog != progNFS || vers != 3 {
		return r, nil
	}
	name := func(lookup bool) {
		_ = x.opaque(maxHandleOpaque)
		n := x.opaque(4096)
		if !x.ok || r.badName != nil {
			return
		}
		s := string(n)
		if lookup && (s == "." || s == "..") {
			return // go-nfs answers these from the handle's path
		}
		if lookup && s == "" {
			// No entry has the empty name: NOENT, as ganesha answers (and
			// as a local lookup of "" fails), not the INVAL of a name the
			// core refuses to make.
			r.badName = server.E("lookup", server.KindNotFound, "", errEmptyName)
			return
		}
		r.badName = server.CheckName("name", s)
	}
	switch r.proc {
	case procLookup:
		name(true)
	case procCreate:
		name(false)
		r.createHow = x.uint32()
		if r.createHow == createExclusive {
			copy(r.verf[:], x.fixed(8))
		}
	case procMkdir, procSymlink, procMknod, procRemove, procRmdir:
		name(false)
	case procRename:
		name(false)
		name(false)
	case procLink:
		_ = x.opaque(maxHandleOpaque) // the file
		name(false)
	}
	return r, nil
}

// answerMount builds the reply record for the MOUNT procedures go-nfs lacks, nil
// for everything else. EXPORT lists "/" (every "/@APP" is the same tree under
// another identity); DUMP lists nothing (mounts are not tracked).
func answerMount(r *request, body []byte) []byte {
	if r.prog != progMount {
		return nil
	}
	var res []byte
	switch r.proc {
	case mountProcExport:
		res = appendUint32(res, 1) // an exportnode follows
		res = appendOpaque(res, []byte("/"))
		res = appendUint32(res, 0) // no groups: everyone
		res = appendUint32(res, 0) // no more exports
	case mountProcDump:
		res = appendUint32(res, 0)
	case mountProcUmntAll:
	default:
		return nil
	}
	rec := appendUint32(nil, 0) // record mark, filled below
	rec = appendUint32(rec, r.xid)
	rec = appendUint32(rec, 1) // REPLY
	rec = appendUint32(rec, 0) // MSG_ACCEPTED
	rec = appendUint32(rec, 0) // verifier AUTH_NONE
	rec = appendUint32(rec, 0)
	rec = appendUint32(rec, 0) // SUCCESS
	rec = append(rec, res...)
	binary.BigEndian.PutUint32(rec, uint32(len(rec)-4)|lastFragment)
	return rec
}
