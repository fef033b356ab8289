package meta

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"time"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/control"
)

// The per-field extended attributes of every real file (9P Txattrwalk and
// Txattrcreate: getfattr, setfattr). Task and related apps are read and
// written (related apps comma-separated); the rest are read-only.
const (
	XattrTask        = "user.semfs.task"
	XattrRelatedApps = "user.semfs.related_apps"
	XattrCreatedBy   = "user.semfs.created_by"
	XattrCreatedAt   = "user.semfs.created_at"
	XattrUpdatedAt   = "user.semfs.updated_at"
)

var xattrNames = []string{XattrTask, XattrRelatedApps, XattrCreatedBy, XattrCreatedAt, XattrUpdatedAt}

// recordOf is real file p's record as the caller may see it.
func (t *Tree) recordOf(ctx context.Context, op, p string) (index.Record, error) {
	a, err := t.lstat(ctx, op, p)
	if err != nil {
		return index.Record{}, err
	}
	if a.IsDir() || (!a.Mode.IsRegular() && !a.IsSymlink()) {
		return index.Record{}, server.E(op, server.KindNotSupported, p, errors.New("only files carry tags"))
	}
	rec, err := t.idx.Get(p)
	if err != nil {
		rec = index.Record{Path: p}
	}
	return rec, nil
}

func stampText(at time.Time) string {
	if at.IsZero() {
		return ""
	}
	return at.UTC().Format(time.RFC3339Nano)
}

// GetXattr implements server.VirtualXattrs. An attribute whose field is empty
// is absent (ENODATA, as Linux says of an attribute a file does not have).
func (t *Tree) GetXattr(ctx context.Context, p, name string) ([]byte, error) {
	rec, err := t.recordOf(ctx, "getxattr", p)
	if err != nil {
		return nil, err
	}
	var v string
	switch name {
	case XattrTask:
		v = rec.Task
	case XattrRelatedApps:
		v = strings.Join(rec.RelatedApps, ",")
	case XattrCreatedBy:
		v = rec.CreatedBy
	case XattrCreatedAt:
		v = stampText(rec.CreatedAt)
	case XattrUpdatedAt:
		v = stampText(rec.UpdatedAt)
	default:
		return nil, server.E("getxattr", server.KindNotSupported, p, errors.New("no such semfs attribute: "+name))
	}
	if v == "" {
		// ENODATA is the cause a front end shows (9P: ninep/xattr.go).
		return nil, server.E("getxattr", server.KindNotFound, p, syscall.ENODATA)
	}
	return []byte(v), nil
}

// CheckXattr implements server.VirtualXattrs: task and related apps may be
// set; the other fields only read (EPERM, not EACCES: no caller may).
func (t *Tree) CheckXattr(name string) error { return checkXattr("xattr", "", name) }

func checkXattr(op, p, name string) error {
	switch name {
	case XattrTask, XattrRelatedApps:
		return nil
	case XattrCreatedBy, XattrCreatedAt, XattrUpdatedAt:
		return server.E(op, server.KindNotPermitted, p, errors.New(name+" is read-only"))
	}
	return server.E(op, server.KindNotSupported, p, errors.New("no such semfs attribute: "+name))
}

// SetXattr implements server.VirtualXattrs: task or related apps, through the
// same call as a tags file write; the other fields are read-only.
func (t *Tree) SetXattr(ctx context.Context, p, name string, value []byte) error {
	if err := checkXattr("setxattr", p, name); err != nil {
		return err
	}
	rec, err := t.recordOf(ctx, "setxattr", p)
	if err != nil {
		return err
	}
	task, apps := rec.Task, rec.RelatedApps
	if name == XattrTask {
		task = string(value)
	} else {
		apps = nil
		for _, a := range strings.Split(string(value), ",") {
			if a = strings.TrimSpace(a); a != "" {
				apps = append(apps, a)
			}
		}
	}
	if msg := control.CheckTags(task, apps); msg != "" {
		return server.E("setxattr", server.KindInvalid, p, errors.New(msg))
	}
	return t.retag(ctx, "setxattr", p, p, task, apps)
}

// ListXattrs implements server.VirtualXattrs: the attributes the file has.
func (t *Tree) ListXattrs(ctx context.Context, p string) ([]string, error) {
	if _, err := t.recordOf(ctx, "listxattr", p); err != nil {
		return nil, err
	}
	var out []string
	for _, n := range xattrNames {
		if _, err := t.GetXattr(ctx, p, n); err == nil {
			out = append(out, n)
		}
	}
	return out, nil
}
