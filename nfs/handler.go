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

// connHandler is the go-nfs Handler of one connection. go-nfs calls it, and the
// billy filesystems it returns, only from the connection's serving goroutine, one
// call at a time, so it needs no locks of its own; the Server's shared state is
// locked where it lives.
type connHandler struct {
	s   *Server
	c   *rpcConn
	fss map[uint32]*billyFS // by app id: RENAME compares both directories' filesystems with reflect.DeepEqual

	// The last handle resolved in the current call (resolvedFor): the parent
	// directory for ToHandle in READDIRPLUS and LOOKUP, the inode for the fd cache.
	resolvedFor *request
	resolved    string
	resolvedID  inodeID

	attrsFor *request // the call attrs belong to (see lstat)
	attrs    map[string]server.Attr

	out []byte // the fast path's reply buffer, reused call after call

	// inline: the call is answered on the connection's reading goroutine with
	// raw system calls only (see serveFast): lstat goes through the core's
	// LstatInline.
	inline bool

	commits chan struct{} // COMMITs waiting on the disk off this goroutine (commitLater)

	// fresh is the inode the current call's create made (billyFS.Create), for
	// ToHandle to record without reading the map first (handleMap.putNew).
	fresh freshFile

	// writeback: the data of the WRITE just answered, for afterReply to
	// start writing to the disk (fastWrite; the reading goroutine's only).
	writeback writebackKick

	workers workers // the reading goroutine's: workers it handed calls to (workers.go)
	worker  bool    // this handler is a worker's: the call it serves is cur
	cur     *request

	view callView // the current call's policy view (view.go)
}

// freshFile is an inode made by the call r.
type freshFile struct {
	r   *request
	ino uint64
}

// current returns the call this handler serves: the worker's, or the one the
// connection's reading goroutine (go-nfs's, or the fast path inline) serves.
func (h *connHandler) current() *request {
	if h.worker {
		return h.cur
	}
	return h.c.current()
}

// connHandler is no gonfs.CachingHandler: go-nfs's only use of one is
// READDIR and READDIRPLUS, which the adapter answers (fastpath.go, readdir.go).
var _ gonfs.Handler = (*connHandler)(nil)

func (h *connHandler) fsFor(id uint32, app string) *billyFS {
	b := h.fss[id]
	if b == nil {
		b = &billyFS{h: h, app: app, appID: id}
		h.fss[id] = b
		h.c.obs.app(app)
	}
	return b
}

// guard turns a panic in the adapter into an error for the current call (go-nfs
// would otherwise let it kill the process: it serves on goroutines of its own).
func (h *connHandler) guard(op string, err *error) {
	v := recover()
	if v == nil {
		return
	}
	h.s.log.Error("panic in NFS adapter; answering SERVERFAULT", "op", op, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	r := h.current()
	r.fail(nfs3ErrServerFault)
	r.panicked = true
	if err != nil {
		*err = &fs.PathError{Op: op, Err: syscall.EIO}
	}
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
	app, sub, st := h.mountPath(string(req.Dirpath))
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
func (h *connHandler) mountPath(dirpath string) (app, sub string, st gonfs.MountStatus) {
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

func (h *connHandler) FSStat(ctx context.Context, bfs billy.Filesystem, st *gonfs.FSStat) (err error) {
	defer h.guard("fsstat", &err)
	s, err := h.s.fsys.StatFS(ctx)
	if err != nil {
		return pathError(h.current(), "fsstat", "", err)
	}
	bs := uint64(s.BlockSize)
	st.TotalSize, st.FreeSize, st.AvailableSize = s.Blocks*bs, s.BlocksFree*bs, s.BlocksAvail*bs
	st.TotalFiles, st.FreeFiles, st.AvailableFiles = s.Files, s.FilesFree, s.FilesFree
	return nil
}

// ToHandle makes the persistent handle of the file at path (see handle.go) and
// records where it lives. A path that does not exist gets an empty handle (go-nfs
// asks for LINK's new name before creating it, and never uses that handle).
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
	if len(path) == 0 && b.mountRoot != "" {
		p = b.mountRoot // the MOUNT reply of a subdirectory (Mount)
	}
	a, err := h.lstat(p)
	if err != nil {
		return nil
	}
	id := idOf(a)
	n := node{gen: id.gen}
	if p != "" {
		dir, name := server.Split(p)
		n.name = name
		if h.resolvedFor == h.current() && h.resolved == dir {
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
	if h.fresh.r != nil && h.fresh.r == h.current() && h.fresh.ino == id.ino {
		put = h.s.hm.putNew
	}
	if err := put(id.ino, n); err != nil {
		h.s.log.Error("recording file handle", "path", p, "err", err)
	}
	return encodeHandle(h.s.hm.macs, fileHandle{app: b.appID, ino: id.ino, gen: id.gen})
}

// FromHandle resolves a handle to its file's current path and the filesystem of
// its mount's app. It is where a call learns its identity and where names the
// core refuses stop the call.
func (h *connHandler) FromHandle(fh []byte) (bfs billy.Filesystem, path []string, err error) {
	defer h.guard("resolve", &err)
	b, p, err := h.resolveHandle(fh)
	if err != nil {
		return nil, nil, err
	}
	if p == "" {
		return b, nil, nil
	}
	return b, strings.Split(p, "/"), nil
}

// resolveHandle turns a handle of the current call into the filesystem of its
// app and the file's core path, recording the failure status on the call.
func (h *connHandler) resolveHandle(fh []byte) (*billyFS, string, error) {
	r := h.current()
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
	h.setView(r, app)
	p, id, err := h.s.resolve(fhd, h.lstat)
	if err == nil && h.hidden(p) {
		err = errHidden("resolve", p) // a handle learned elsewhere: STALE
	}
	if err != nil {
		r.fail(nfs3ErrStale)
		return nil, "", err
	}
	h.resolvedFor, h.resolved, h.resolvedID = r, p, id
	r.fail(0)
	return h.fsFor(fhd.app, app), p, nil
}

// InvalidateHandle does nothing: handles name inodes, so they stay valid across
// renames, and a removed file's handle resolves to STALE by itself.
func (h *connHandler) InvalidateHandle(billy.Filesystem, []byte) error { return nil }

// HandleLimit is large because go-nfs also uses it to cap directory pages
// (HandleLimit/2 entries); handles themselves are not limited.
func (h *connHandler) HandleLimit() int { return 1 << 24 }
