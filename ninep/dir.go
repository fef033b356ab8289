package ninep

import (
	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
	"github.com/semfs/semfs/server"
)

// direntLen is the encoded size of a dirent: qid[13] offset[8] type[1] name[s].
func direntLen(name string) int { return 13 + 8 + 1 + 2 + len(name) }

// minDirent is the size of the smallest dirent, one with a one-byte name.
const minDirent = 13 + 8 + 1 + 2 + 1

// snapshot lists the open directory: ".", "..", then the core's sorted entries.
// An entry's Offset is its index + 1, the cookie Treaddir resumes after.
func (f *file) snapshot() ([]p9.Dirent, error) {
	p := f.p()
	self, err := f.srv.fs.Lstat(f.ctx, p)
	if err != nil {
		return nil, err
	}
	if err := f.verify(self); err != nil {
		return nil, err
	}
	parent := self
	if p != "" {
		dir, _ := server.Split(p)
		if parent, err = f.srv.fs.Lstat(f.ctx, dir); err != nil {
			return nil, err
		}
	}
	list, err := f.srv.fs.ReadDir(f.ctx, p)
	if err != nil {
		return nil, err
	}
	ents := make([]p9.Dirent, 0, len(list)+2)
	add := func(name string, a server.Attr) {
		ents = append(ents, p9.Dirent{QID: qidOf(a), Offset: uint64(len(ents) + 1), Type: p9.QIDType(dirType(a.Mode)), Name: name})
	}
	add(".", self)
	add("..", parent)
	for _, e := range list {
		add(e.Name, e.Attr)
	}
	return ents, nil
}

// Readdir implements p9.File.Readdir. Each open fid lists from its own snapshot,
// taken when it reads from offset 0 (the start, or a rewind), so offsets stay
// valid and no entry is skipped or repeated however the directory changes while
// a client walks through it (rm -r deletes as it lists). count is in bytes on
// the wire; the entries that fit are returned (p9 would drop the rest). A count
// too small for the next entry answers EINVAL, as getdents(2) does, and the
// offset stays where it is, so a caller that asks again with a larger count gets
// that entry: an empty reply would be the end of the listing, and every entry
// after it would be lost without a word (p9's encoder drops entries past count).
// A count below the smallest dirent (minDirent) cannot mean bytes: it is taken
// as a number of entries, as p9's own helpers and acceptance suite pass it when
// they call Readdir directly.
func (f *file) Readdir(offset uint64, count uint32) (ents p9.Dirents, err error) {
	defer f.guard("readdir", &err)
	if !f.dirOpen.Load() {
		return nil, linux.EBADF
	}
	f.dmu.Lock()
	defer f.dmu.Unlock()
	if offset == 0 || f.ents == nil {
		all, err := f.snapshot()
		if err != nil {
			return nil, toErrno(err)
		}
		f.ents = all
	}
	if offset >= uint64(len(f.ents)) {
		return nil, nil
	}
	rest := f.ents[offset:]
	n, size := 0, 0
	for n < len(rest) {
		size += direntLen(rest[n].Name)
		if size > int(count) {
			break
		}
		n++
	}
	if n == 0 && count < minDirent {
		n = min(int(count), len(rest))
	} else if n == 0 {
		return nil, linux.EINVAL
	}
	return append(p9.Dirents(nil), rest[:n]...), nil
}
