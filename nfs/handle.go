package nfs

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash"
	"sync"
)

// Handle layout (32 bytes, under NFS3_FHSIZE's 64, and a multiple of 4 because
// go-nfs v0.0.4 reads handles with xdr.ReadOpaque, which skips no padding: any
// other length shifts every argument after the handle):
//
//	[0]      version (handleVersion)
//	[1:5]    app id: the mount's app, from the persistent app table (0 = anonymous)
//	[5:13]   inode number
//	[13:21]  generation: the inode's birth time in ns (server.Attr.Btime), 0 if the
//	         filesystem has none; it tells a reused inode number from the file
//	         the handle was made for
//	[21:32]  HMAC-SHA256 of [0:21] under the state directory's key, truncated
//
// A handle names a file, not a path, so it survives renames and restarts. The MAC
// makes the app id unforgeable: a client cannot claim another app's identity by
// editing a handle.
const (
	handleVersion = 1
	handleLen     = 32
	handleMACOff  = 21
)

type fileHandle struct {
	app uint32
	ino uint64
	gen uint64
}

var (
	errBadHandle = errors.New("malformed file handle")
	errForged    = errors.New("file handle fails authentication (state directory changed?)")
)

// handleMACs hands out HMACs under one key, reset and reused: every call
// resolves a handle and many make one, and a new HMAC per handle was an
// allocation and a key schedule each (3 % of a create's CPU).
type handleMACs struct {
	key  []byte
	pool sync.Pool // hash.Hash
}

func newHandleMACs(key []byte) *handleMACs {
	m := &handleMACs{key: key}
	m.pool.New = func() any { return hmac.New(sha256.New, key) }
	return m
}

// sum appends the MAC of b to out.
func (m *handleMACs) sum(out, b []byte) []byte {
	h := m.pool.Get().(hash.Hash)
	h.Reset()
	h.Write(b)
	out = h.Sum(out)
	m.pool.Put(h)
	return out
}

func encodeHandle(macs *handleMACs, h fileHandle) []byte {
	b := make([]byte, handleMACOff, handleMACOff+sha256.Size)
	b[0] = handleVersion
	binary.BigEndian.PutUint32(b[1:], h.app)
	binary.BigEndian.PutUint64(b[5:], h.ino)
	binary.BigEndian.PutUint64(b[13:], h.gen)
	return macs.sum(b, b)[:handleLen]
}

func decodeHandle(macs *handleMACs, b []byte) (fileHandle, error) {
	if len(b) != handleLen || b[0] != handleVersion {
		return fileHandle{}, errBadHandle
	}
	var sum [sha256.Size]byte
	if !hmac.Equal(macs.sum(sum[:0], b[:handleMACOff])[:handleLen-handleMACOff], b[handleMACOff:]) {
		return fileHandle{}, errForged
	}
	return fileHandle{
		app: binary.BigEndian.Uint32(b[1:]),
		ino: binary.BigEndian.Uint64(b[5:]),
		gen: binary.BigEndian.Uint64(b[13:]),
	}, nil
}
