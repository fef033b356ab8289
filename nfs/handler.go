package nfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"runtime/debug"
	"strings"
	"syscall"

	billy "github.com/go-git/go-billy/v5"
	"github.com/semfs/semfs/server"
	gonfs "github.com/willscott/go-nfs"
)

const nfs3ErrServerFault = 10006

// connHandler answers a connection's calls: one for the connection's reading
// goroutine (also go-nfs's Handler, for MOUNT), one for each of its workers.
// A handler answers one call at a time (see call), so it needs no locks of
// its own; the Server's shared state is locked where it lives.
type connHandler struct {
	s   *Server
	c   *rpcConn
	fss map[uint32]*billyFS // by app id

	// attrs caches lstat's answers for the call being answered (see lstat);
	// newCall empties it.
	attrs map[string]server.Attr

	out []byte // the reply buffer, reused call after call

	commits chan struct{} // COMMITs waiting on the disk off this goroutine (commitLater)

	// writeback: the data of the WRITE just answered, for afterReply to
	// start writing to the disk (fastWrite; the reading goroutine's only).
	writeback writebackKick

	workers workers // the reading goroutine's: workers it handed calls to (workers.go)
	worker  bool    // this handler is a worker's
}

// mountCall is the call go-nfs is serving (MOUNT), as a call value.
func (h *connHandler) mountCall() call { return h.newCall(h.c.current()) }

// connHandler is no gonfs.CachingHandler: go-nfs's only use of one is
// READDIR and READDIRPLUS, which the adapter answers (fastpath.go, readdir.go).
var _ gonfs.Handler = (*connHandler)(nil)

func (h *connHandler) fsFor(id uint32, app string) *billyFS {
	b := h.fss[id]
	if b == nil {
		b = &billyFS{app: app, appID: id}
		h.fss[id] = b
		h.c.obs.app(app)
	}
	return b
}

// Mount honours the export path: "/" mounts the whole tree anonymously, "/@APP"
// mounts it as APP; anything else is refused. The app travels in every handle.
func (h *connHandler) Mount(ctx context.Context, conn net.Conn, req gonfs.MountRequest) (status gonfs.MountStatus, bfs billy.Filesystem, flavors []gonfs.AuthFlavor) {
	defer func() {
		if v := recover(); v != nil {
			h.s.log.Error("panic in MOUNT", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			status, bfs, flavors = gonfs.MountStatusErrServerFault, nil, nil
		}
	}()
	k := h.mountCall()
	app, sub, st := k.mountPath(string(req.Dirpath))
	if st != gonfs.MountStatusOk {
		h.s.log.Info("mount refused", "path", string(req.Dirpath), "status", uint32(st))
		return st, nil, nil
	}
	id, err := h.s.hm.appID(app)
	if err != nil {
		h.s.log.Error("mount: recording app", "app", app, "err", err)
		return gonfs.MountStatusErrServerFault, nil, nil
	}
	b := h.fsFor(id, app)
	if sub != "" {
		// go-nfs asks this filesystem for its root's handle and nothing
		// else; every later call finds the app's own billyFS through the
		// handle (handles name files, not paths), so the copy goes no further.
		c := *b
		c.mountRoot = sub
		b = &c
	}
	return gonfs.MountStatusOk, b, []gonfs.AuthFlavor{gonfs.AuthFlavorUnix, gonfs.AuthFlavorNull}
}

// mountPath splits a MOUNT path into its app ("" for the whole tree, "@APP" as
// the first segment otherwise) and a directory below the backing root, as
// Linux's nfsd lets a client mount a subdirectory of an export: `mount
// host:/@notes/projects /mnt` or libnfs's URLs, which mount the directory they
// name (nfs-ls nfs://host/@notes/.semfs/query/auth). The directory must exist
// and be a directory reached without symlinks (the core's containment rules);
// like nfsd without subtree checks, the directories above it are not checked
// for the caller's search permission (the answer only names the directory's
// handle; every call through it is checked as usual).
func (h *call) mountPath(dirpath string) (app, sub string, st gonfs.MountStatus) {
	p := strings.Trim(dirpath, "/")
	first, rest, _ := strings.Cut(p, "/")
	if strings.HasPrefix(first, "@") {
		a, ok := server.AppFromMount(first)
		if !ok {
			return "", "", gonfs.MountStatusErrNoEnt
		}
		app, p = a, rest
	}
	if p == "" || p == "." {
		return app, "", gonfs.MountStatusOk
	}
	sub, err := server.CleanPath("mount", p)
	if err != nil {
		return "", "", gonfs.MountStatusErrNoEnt
	}
	a, err := h.lstat(sub)
	switch {
	case err != nil && server.KindOf(err) == server.KindPermission:
		return "", "", gonfs.MountStatusErrAcces
	case err != nil:
		return "", "", gonfs.MountStatusErrNoEnt
	case !a.IsDir():
		return "", "", gonfs.MountStatusErrNotDir
	}
	return app, sub, gonfs.MountStatusOk
}

// Change returns nil: go-nfs changes attributes (SETATTR, and the sattr3 of
// CREATE, MKDIR, SYMLINK, MKNOD) and links only in procedures the adapter
// answers itself.
func (h *connHandler) Change(billy.Filesystem) billy.Change { return nil }

// FSStat refuses: go-nfs never asks (FSSTAT is the adapter's, info.go).
func (h *connHandler) FSStat(context.Context, billy.Filesystem, *gonfs.FSStat) error {
	return &fs.PathError{Op: "fsstat", Path: "/", Err: syscall.ENOTSUP}
}

// ToHandle makes the handle of the file at path for go-nfs's MOUNT reply
// (the mount's root, or the subdirectory it names).
func (h *connHandler) ToHandle(bfs billy.Filesystem, path []string) (out []byte) {
	defer func() {
		if v := recover(); v != nil {
			h.s.log.Error("panic in ToHandle", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			out = nil
		}
	}()
	b, ok := bfs.(*billyFS)
	if !ok {
		return nil // a refused MOUNT
	}
	p, err := server.CleanTreePath("handle", strings.Join(path, "/"))
	if err != nil {
		return nil
	}
	k := h.mountCall()
	if len(path) == 0 && b.mountRoot != "" {
		p = b.mountRoot // the MOUNT reply of a subdirectory (Mount)
		// The client never looked up the directories above it, so the
		// handle map may not know them, and resolve finds a file's path
		// through its parents' entries up to the root's: without them, the
		// mount's first call (FSINFO) answered STALE until something had
		// walked there.
		for d := p; d != ""; {
			d, _ = server.Split(d)
			if k.handleOf(b, d) == nil {
				return nil
			}
		}
	}
	return k.handleOf(b, p)
}

// handleOf makes the persistent handle of the file at core path p (see
// handle.go) and records where it lives; nil when p cannot be stat'ed.
func (h *call) handleOf(b *billyFS, p string) []byte {
	a, err := h.lstat(p)
	if err != nil {
		return nil
	}
	id := idOf(a)
	n := node{gen: id.gen}
	if p != "" {
		dir, name := server.Split(p)
		n.name = name
		if h.hasResolved && h.resolved == dir {
			n.parent = h.resolvedID.ino
		} else {
			pa, err := h.lstat(dir)
			if err != nil {
				return nil
			}
			n.parent = pa.Ino
		}
	}
	put := h.s.hm.put
	if h.fresh != 0 && h.fresh == id.ino {
		put = h.s.hm.putNew
	}
	if err := put(id.ino, n); err != nil {
		h.s.log.Error("recording file handle", "path", p, "err", err)
	}
	return encodeHandle(h.s.hm.macs, fileHandle{app: b.appID, ino: id.ino, gen: id.gen})
}

// FromHandle resolves a handle for go-nfs, which never asks (it answers only
// MOUNT): the interface wants it.
func (h *connHandler) FromHandle(fh []byte) (bfs billy.Filesystem, path []string, err error) {
	defer func() {
		if v := recover(); v != nil {
			h.s.log.Error("panic in FromHandle", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			bfs, path, err = nil, nil, &fs.PathError{Op: "resolve", Err: syscall.EIO}
		}
	}()
	k := h.mountCall()
	b, p, err := k.resolveHandle(fh)
	if err != nil {
		return nil, nil, err
	}
	if p == "" {
		return b, nil, nil
	}
	return b, strings.Split(p, "/"), nil
}

// resolveHandle turns a handle of the call into the filesystem of its app
// and the file's core path, recording the failure status on the call. It is
// where a call learns its identity's app and policy view, and where names
// the core refuses stop the call.
func (h *call) resolveHandle(fh []byte) (*billyFS, string, error) {
	r := h.r
	h.s.maybePanic("resolve")
	if r.badName != nil {
		return nil, "", pathError(r, "resolve", "", r.badName)
	}
	fhd, err := decodeHandle(h.s.hm.macs, fh)
	if err != nil {
		if errors.Is(err, errBadHandle) {
			r.fail(nfs3ErrBadHandl)
		} else {
			r.fail(nfs3ErrStale)
		}
		return nil, "", err
	}
	app, ok := h.s.hm.appName(fhd.app)
	if !ok {
		r.fail(nfs3ErrStale)
		return nil, "", errForged
	}
	h.rules = h.s.fsys.RulesFor(identity(r, app))
	p, id, err := h.s.resolve(fhd, h.lstat)
	if err == nil && h.hidden(p) {
		err = errHidden("resolve", p) // a handle learned elsewhere: STALE
	}
	if err != nil {
		r.fail(nfs3ErrStale)
		return nil, "", err
	}
	h.resolved, h.resolvedID, h.hasResolved = p, id, true
	r.fail(0)
	return h.fsFor(fhd.app, app), p, nil
}

// InvalidateHandle does nothing: handles name inodes, so they stay valid across
// renames, and a removed file's handle resolves to STALE by itself.
func (h *connHandler) InvalidateHandle(billy.Filesystem, []byte) error { return nil }

// HandleLimit is large because go-nfs also uses it to cap directory pages
// (HandleLimit/2 entries); handles themselves are not limited.
func (h *connHandler) HandleLimit() int { return 1 << 24 }
