package ninep

import (
	"encoding/binary"
	"github.com/semfs/semfs/server"
	"sync"
	"time"
)

// ObserveFunc is told of every answered request: the operation (the
// T-message's name without the T, lower case: "walk", "read", "lcreate"; "other"
// for a type semfs does not know), whether the answer was an error (Rlerror or
// Rerror), and the time from the request's header being read to the reply's
// header being written. It is called on the connection's goroutines and must
// be quick.
type ObserveFunc func(op string, failed bool, d time.Duration)

// TrackFunc is told the first time a connection serves an app (the app its
// 9P attach names; "" for the root) and returns what to call when that
// connection closes: it counts connections per app.
type TrackFunc func(app string) (release func())

// observer pairs one connection's requests with their replies by tag. A nil
// *observer observes nothing.
type observer struct {
	fn   ObserveFunc
	apps *server.ConnApps // nil without a TrackFunc
	mu   sync.Mutex
	// inflight maps a tag to its request; a Tflush'd request that gets no
	// reply stays until its tag is reused (at most 65536 entries).
	inflight map[uint16]inflight
}

type inflight struct {
	typ   uint8
	start time.Time
}

func newObserver(fn ObserveFunc, track TrackFunc) *observer {
	if fn == nil && track == nil {
		return nil
	}
	return &observer{fn: fn, inflight: map[uint16]inflight{}, apps: server.NewConnApps(track)}
}

// request notes a T-message's arrival.
func (o *observer) request(typ uint8, tag uint16) {
	if o == nil || o.fn == nil {
		return
	}
	now := time.Now()
	o.mu.Lock()
	o.inflight[tag] = inflight{typ: typ, start: now}
	o.mu.Unlock()
}

// reply notes the reply whose header is hdr (size[4] type[1] tag[2]); short
// headers are ignored.
func (o *observer) reply(hdr []byte) {
	if o == nil || o.fn == nil || len(hdr) < headerLen {
		return
	}
	typ, tag := hdr[4], binary.LittleEndian.Uint16(hdr[5:])
	o.mu.Lock()
	req, ok := o.inflight[tag]
	delete(o.inflight, tag)
	o.mu.Unlock()
	if !ok {
		return
	}
	o.fn(opName(req.typ), typ == msgRlerror || typ == 107 /* Rerror */, time.Since(req.start))
}

// opName names a T-message type; the set is closed so that a metric label
// cannot grow with what clients send.
func opName(typ uint8) string {
	switch typ {
	case 8:
		return "statfs"
	case msgTlopen:
		return "lopen"
	case msgTlcreate:
		return "lcreate"
	case 16:
		return "symlink"
	case 18:
		return "mknod"
	case msgTrename:
		return "rename"
	case 22:
		return "readlink"
	case msgTgetattr:
		return "getattr"
	case 26:
		return "setattr"
	case msgTxattrwalk:
		return "xattrwalk"
	case msgTxattrcreate:
		return "xattrcreate"
	case 40:
		return "readdir"
	case 50:
		return "fsync"
	case msgTlock:
		return "lock"
	case msgTgetlock:
		return "getlock"
	case msgTlink:
		return "link"
	case 72:
		return "mkdir"
	case msgTrenameat:
		return "renameat"
	case msgTunlinkat:
		return "unlinkat"
	case msgTversion:
		return "version"
	case msgTauth:
		return "auth"
	case msgTattach:
		return "attach"
	case msgTflush:
		return "flush"
	case msgTwalk:
		return "walk"
	case msgTread:
		return "read"
	case msgTwrite:
		return "write"
	case msgTclunk:
		return "clunk"
	case msgTremove:
		return "remove"
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
