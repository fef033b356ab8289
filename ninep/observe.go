package ninep

import (
	"encoding/binary"

	"github.com/semfs/semfs/server"
)

// ObserveFunc is told of every answered request (server.ObserveFunc): the
// operation is the T-message's name without the T, lower case ("walk", "read",
// "lcreate"; "other" for a type semfs does not know); an error is Rlerror or
// Rerror; the time runs from the request's header being read to the reply's
// header being written.
type ObserveFunc = server.ObserveFunc

// TrackFunc counts connections per app (the app a 9P attach names; "" for the
// root): server.TrackFunc.
type TrackFunc = server.TrackFunc

// observer pairs one connection's requests with their replies by tag. A nil
// *observer observes nothing.
type observer struct {
	fn    ObserveFunc
	calls server.Calls[uint16, uint8] // tag -> T-message type (at most 65536 entries)
	apps  *server.ConnApps            // nil without a TrackFunc
}

func newObserver(fn ObserveFunc, track TrackFunc) *observer {
	if fn == nil && track == nil {
		return nil
	}
	return &observer{fn: fn, apps: server.NewConnApps(track)}
}

// request notes a T-message's arrival.
func (o *observer) request(typ uint8, tag uint16) {
	if o == nil || o.fn == nil {
		return
	}
	o.calls.Start(tag, typ)
}

// reply notes the reply whose header is hdr (size[4] type[1] tag[2]); short
// headers are ignored.
func (o *observer) reply(hdr []byte) {
	if o == nil || o.fn == nil || len(hdr) < headerLen {
		return
	}
	typ, tag := hdr[4], binary.LittleEndian.Uint16(hdr[5:])
	req, took, ok := o.calls.Done(tag)
	if !ok {
		return
	}
	o.fn(opName(req), typ == msgRlerror || typ == 107 /* Rerror */, took)
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
