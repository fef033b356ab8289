package nfs

import (
	"context"

	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/policy"
)

// call is the state of one NFS call while the adapter answers it: made when
// the answer starts (connHandler.newCall), passed to every step of the answer
// as its receiver, and dropped once the reply is built. It embeds the handler
// of the goroutine answering it (the connection's reading goroutine, or a
// worker's), whose reusable reply buffer and attribute cache the call
// borrows meanwhile; nothing of the call outlives it in the handler.
type call struct {
	*connHandler
	r *request

	// inline: answered on the connection's reading goroutine with raw system
	// calls only (answerInline): lstat goes through the core's LstatInline.
	inline bool

	// The last handle the call resolved (resolveHandle): the parent directory
	// for handleOf, the inode for the fd cache and COMMIT.
	resolved    string
	resolvedID  inodeID
	hasResolved bool

	// fresh is the inode the call's create made (create, made), for handleOf
	// to record without reading the map first (handleMap.putNew); 0: none.
	fresh uint64

	// rules is the call's policy view (view.go), set when a handle is
	// resolved, for the app it was mounted as; nil: nothing hidden.
	rules *policy.App
}

// newCall starts answering r on h. The handler's attribute cache is the
// call's from now on (see lstat).
func (h *connHandler) newCall(r *request) call {
	clear(h.attrs)
	return call{connHandler: h, r: r}
}

// ctx carries the call's identity: its AUTH_UNIX credentials, mounted as b's
// app.
func (h *call) ctx(b *billyFS) context.Context {
	return server.WithIdentity(context.Background(), identity(h.r, b.app))
}
