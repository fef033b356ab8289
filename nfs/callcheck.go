package nfs

import (
	"encoding/binary"
	"errors"
)

// The record stream checks every call completely before anything decodes it.
// go-nfs's XDR decoding allocates whatever length a field declares before it
// reads a byte (a GETATTR saying its handle is 0xfffffff0 bytes long made the
// daemon allocate 4 GiB), so no call reaches go-nfs, the adapter's answers or the MOUNT
// answers unless each opaque, string and array in it is within its protocol
// bound and within the bytes left in the record. Bounds are those of RFC 5531
// (credentials), RFC 1813 (NFSv3, MOUNT v3) and Linux's nfsd where the RFC
// leaves them open (paths 4096 bytes; names too, see maxNameLen).
const (
	maxAuthBody    = 400 // RFC 5531: opaque_auth body<400>
	maxMachineName = 255 // RFC 5531 authsys_parms.machinename<255>
	maxAuthGids    = 16  // RFC 5531 authsys_parms.gids<16>
	// filename3 on the wire. RFC 1813 leaves it unbounded and Linux's nfsd
	// refuses a name past NFS3_MAXNAMLEN (255) as garbage, which a kernel
	// client reports as EIO. Here, as in ganesha, such a call is well formed
	// and its procedure answers NFS3ERR_NAMETOOLONG (server.CheckName, through
	// request.badName), so the client reports ENAMETOOLONG; only a name
	// longer than a whole path is garbage.
	maxNameLen      = 4096
	maxNFSPathLen   = 4096 // nfspath3: NFS3_MAXPATHLEN (PATH_MAX)
	maxMountPathLen = 1024 // MNTPATHLEN: dirpath<MNTPATHLEN>
	nfsProcMax      = 21   // COMMIT
	mountProcMax    = 5    // EXPORT

	// Procedures request.go does not name.
	procReadlink  = 5
	procReaddir   = 16
	procFsstat    = 18
	procPathconf  = 20
	mountProcUmnt = 3

	nfs3ErrBadType = 10007 // NFS3ERR_BADTYPE: a type the server does not create
)

// RPC reply codes the adapter sends itself (RFC 5531).
const (
	acceptProgUnavail  = 1
	acceptProgMismatch = 2
	acceptProcUnavail  = 3
	acceptGarbageArgs  = 4

	rejectRPCMismatch = 0
	rejectAuthError   = 1
	authBadCred       = 1 // auth_stat AUTH_BADCRED
)

// errBadHeader: the record is not an RPC call whose header can be read. The
// stream cannot be trusted past it (it may not even be RPC), so the connection
// is closed.
var errBadHeader = errors.New("nfs: malformed RPC call header; closing the connection")

// checkCall validates the call record body (without its record mark). It
// returns errBadHeader when the header cannot be parsed; a reply record (with
// its mark, appended to out) when the call is refused before anything serves
// it: GARBAGE_ARGS for arguments out of bounds, PROG_UNAVAIL, PROG_MISMATCH,
// PROC_UNAVAIL, RPC_MISMATCH, AUTH_BADCRED for a malformed AUTH_UNIX
// credential, NFS3ERR_BADTYPE for a MKNOD of a type the core cannot make; and
// nil, nil for a call that may be served.
func checkCall(body []byte, out []byte) ([]byte, error) {
	x := newXDRReader(body)
	xid := x.uint32()
	mtype := x.uint32()
	rpcvers := x.uint32()
	prog, vers, proc := x.uint32(), x.uint32(), x.uint32()
	credFlavor := x.uint32()
	cred := x.opaque(maxAuthBody)
	_ = x.uint32() // verifier flavor
	_ = x.opaque(maxAuthBody)
	if !x.ok || mtype != 0 {
		return nil, errBadHeader
	}
	reply := func(acceptStat uint32, extra ...uint32) []byte {
		rec := appendUint32(out, 0) // record mark, set below
		rec = appendUint32(rec, xid)
		rec = appendUint32(rec, 1) // REPLY
		rec = appendUint32(rec, 0) // MSG_ACCEPTED
		rec = appendUint32(rec, 0) // verifier AUTH_NONE, empty
		rec = appendUint32(rec, 0)
		rec = appendUint32(rec, acceptStat)
		for _, v := range extra {
			rec = appendUint32(rec, v)
		}
		binary.BigEndian.PutUint32(rec[len(out):], uint32(len(rec)-len(out)-4)|lastFragment)
		return rec
	}
	denied := func(words ...uint32) []byte {
		rec := appendUint32(out, 0)
		rec = appendUint32(rec, xid)
		rec = appendUint32(rec, 1) // REPLY
		rec = appendUint32(rec, 1) // MSG_DENIED
		for _, v := range words {
			rec = appendUint32(rec, v)
		}
		binary.BigEndian.PutUint32(rec[len(out):], uint32(len(rec)-len(out)-4)|lastFragment)
		return rec
	}
	if rpcvers != 2 {
		return denied(rejectRPCMismatch, 2, 2), nil
	}
	if credFlavor == authUnix && !validAuthUnix(cred) {
		return denied(rejectAuthError, authBadCred), nil
	}
	args := newXDRReader(body)
	args.off = x.off
	switch prog {
	case progNFS:
		if vers != 3 {
			return reply(acceptProgMismatch, 3, 3), nil
		}
		if proc > nfsProcMax {
			return reply(acceptProcUnavail), nil
		}
		ok, badType := checkNFSArgs(proc, args)
		if !ok {
			return reply(acceptGarbageArgs), nil
		}
		if badType {
			// MKNOD3resfail: status, then wcc_data with nothing in it.
			return reply(0, nfs3ErrBadType, 0, 0), nil
		}
	case progMount:
		// MOUNT v1 and v3 take the same arguments; go-nfs answers both.
		if vers < 1 || vers > 3 {
			return reply(acceptProgMismatch, 1, 3), nil
		}
		if proc > mountProcMax {
			return reply(acceptProcUnavail), nil
		}
		if proc == mountProcMnt || proc == mountProcUmnt {
			_ = args.opaque(maxMountPathLen)
		}
		if !args.ok {
			return reply(acceptGarbageArgs), nil
		}
	default:
		return reply(acceptProgUnavail), nil
	}
	return nil, nil
}

// validAuthUnix says cred is a well-formed authsys_parms (RFC 5531 appendix A)
// within its bounds.
func validAuthUnix(cred []byte) bool {
	c := newXDRReader(cred)
	_ = c.uint32()                // stamp
	_ = c.opaque(maxMachineName)  // machinename
	_, _ = c.uint32(), c.uint32() // uid, gid
	n := c.uint32()
	if n > maxAuthGids {
		return false
	}
	c.skip(4 * int(n))
	return c.ok
}

// checkNFSArgs checks the arguments of NFSv3 procedure proc (RFC 1813) at x.
// badType reports a MKNOD of a type MKNOD does not make (a regular file, a
// directory, a symlink: RFC 1813 says BADTYPE).
func checkNFSArgs(proc uint32, x *xdrReader) (ok, badType bool) {
	fh := func() { _ = x.opaque(maxHandleOpaque) }
	name := func() { _ = x.opaque(maxNameLen) }
	dirop := func() { fh(); name() }
	boolean := func() bool {
		v := x.uint32()
		if v > 1 {
			x.ok = false
		}
		return v == 1
	}
	timeHow := func() {
		switch x.uint32() {
		case timeDontChange, timeServer:
		case timeClient:
			x.skip(8)
		default:
			x.ok = false
		}
	}
	sattr := func() {
		if boolean() { // mode
			x.skip(4)
		}
		if boolean() { // uid
			x.skip(4)
		}
		if boolean() { // gid
			x.skip(4)
		}
		if boolean() { // size
			x.skip(8)
		}
		timeHow() // atime
		timeHow() // mtime
	}
	switch proc {
	case 0: // NULL
	case procGetattr, procReadlink, procFsstat, procFsinfo, procPathconf:
		fh()
	case procAccess:
		fh()
		x.skip(4) // access mask
	case procSetattr:
		fh()
		sattr()
		if boolean() { // sattrguard3: ctime to check
			x.skip(8)
		}
	case procLookup, procRemove, procRmdir:
		dirop()
	case procRead:
		fh()
		x.skip(12) // offset, count
	case procWrite:
		fh()
		x.skip(8) // offset
		count := x.uint32()
		if x.uint32() > 2 { // stable_how
			x.ok = false
		}
		// The data may be no larger than the wtmax this server advertises,
		// and is exactly count bytes (RFC 1813 WRITE3args).
		data := x.opaque(maxTransfer)
		if x.ok && uint32(len(data)) != count {
			x.ok = false
		}
	case procCreate:
		dirop()
		switch x.uint32() {
		case createUnchecked, createGuarded:
			sattr()
		case createExclusive:
			x.skip(8) // createverf3
		default:
			x.ok = false
		}
	case procMkdir:
		dirop()
		sattr()
	case procSymlink:
		dirop()
		sattr()
		_ = x.opaque(maxNFSPathLen)
	case procMknod:
		dirop()
		switch x.uint32() {
		case 3, 4: // NF3BLK, NF3CHR: devicedata3 (the core refuses them: ownMknod)
			sattr()
			x.skip(8) // specdata3
		case 6, 7: // NF3SOCK, NF3FIFO
			sattr()
		case 1, 2, 5: // NF3REG, NF3DIR, NF3LNK: void, not MKNOD's to make
			badType = true
		default:
			x.ok = false
		}
	case procRename:
		dirop()
		dirop()
	case procLink:
		fh()
		dirop()
	case procReaddir:
		fh()
		x.skip(8 + 8 + 4) // cookie, cookieverf, count
	case procReaddirplus:
		fh()
		x.skip(8 + 8 + 4 + 4) // cookie, cookieverf, dircount, maxcount
	case procCommit:
		fh()
		x.skip(12) // offset, count
	default:
		return false, false
	}
	return x.ok, badType && x.ok
}
