package content

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/RoaringBitmap/roaring/v2"
)

// File is the content index's file name in the index directory.
const File = "content.idx"

const magic = "SEMFSCT2"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Save writes the index to Dir/content.idx (a temporary file renamed over the
// old one, synced first). Dirty paths are not saved: the start-up reconcile
// finds them again by size and mtime.
func (x *Index) Save() error {
	if x.opt.Dir == "" {
		return nil
	}
	var buf bytes.Buffer
	x.mu.Lock()
	x.drainLocked()
	if !x.changed && fileExists(filepath.Join(x.opt.Dir, File)) {
		x.mu.Unlock()
		return nil
	}
	x.compactLocked()
	err := x.encodeLocked(&buf)
	if err == nil {
		x.changed = false
	}
	x.mu.Unlock()
	if err != nil {
		return fmt.Errorf("content index: encoding: %w", err)
	}
	sum := crc32.Checksum(buf.Bytes(), castagnoli)
	buf.Write(binary.LittleEndian.AppendUint32(nil, sum))
	tmp, err := os.CreateTemp(x.opt.Dir, ".content.idx-*")
	if err != nil {
		return fmt.Errorf("content index: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(buf.Bytes())
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(x.opt.Dir, File))
	}
	if err != nil {
		x.mu.Lock()
		x.changed = true
		x.mu.Unlock()
		return fmt.Errorf("content index: saving: %w", err)
	}
	return nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func (x *Index) encodeLocked(w *bytes.Buffer) error {
	w.WriteString(magic)
	var tmp [binary.MaxVarintLen64]byte
	uv := func(v uint64) { w.Write(tmp[:binary.PutUvarint(tmp[:], v)]) }
	sv := func(v int64) { w.Write(tmp[:binary.PutVarint(tmp[:], v)]) }
	uv(uint64(len(x.paths)))
	uv(uint64(x.files.Len()))
	for p, e := range x.files.All() {
		uv(uint64(len(p)))
		w.WriteString(p)
		w.WriteByte(byte(e.state))
		uv(uint64(e.id))
		sv(e.size)
		sv(e.mtime)
		uv(e.ino)
		if e.links {
			w.WriteByte(1)
		} else {
			w.WriteByte(0)
		}
	}
	uv(uint64(x.post.len()))
	var err error
	x.post.each(func(t uint32, b *roaring.Bitmap) bool {
		if err == nil {
			uv(uint64(t))
			uv(b.GetSerializedSizeInBytes())
			_, err = b.WriteTo(w)
		}
		return true
	})
	return err
}

// load reads Dir/content.idx; any flaw is an error and nothing of it is kept.
func (x *Index) load() error {
	data, err := os.ReadFile(filepath.Join(x.opt.Dir, File))
	if err != nil {
		return err
	}
	if len(data) < len(magic)+4 || string(data[:len(magic)]) != magic {
		return errors.New("not a content index of this version")
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return errors.New("checksum mismatch (torn or damaged)")
	}
	r := &reader{b: body[len(magic):]}
	nids := r.uv()
	if nids == 0 || nids > 1<<32 {
		return errors.New("bad id count")
	}
	x.paths = make([]string, nids)
	nf := r.uv()
	used := roaring.New()
	for i := uint64(0); i < nf && r.err == nil; i++ {
		p := string(r.bytes(r.uv()))
		e := &entry{state: State(r.byte()), id: uint32(r.uv()), size: r.sv(), mtime: r.sv(), ino: r.uv(), links: r.byte() == 1}
		if r.err != nil {
			break
		}
		if e.state < Indexed || e.state > NotRegular || p == "" {
			return errors.New("bad entry")
		}
		if e.state == Indexed {
			if e.id == 0 || uint64(e.id) >= nids || used.Contains(e.id) {
				return errors.New("bad file id")
			}
			used.Add(e.id)
			x.paths[e.id] = p
			x.bytes += e.size
		}
		if o := x.files.At(p); o != nil {
			x.states[o.state]-- // a path twice: the last wins, as the map says
		}
		x.files.Put(p, e)
		x.states[e.state]++
		x.linkLocked(p, e)
	}
	np := r.uv()
	for i := uint64(0); i < np && r.err == nil; i++ {
		t := r.uv()
		raw := r.bytes(r.uv())
		if r.err != nil {
			break
		}
		b := roaring.New()
		if _, err := b.ReadFrom(bytes.NewReader(raw)); err != nil {
			return fmt.Errorf("posting: %w", err)
		}
		if t > 0xffffff || !roaring.AndNot(b, used).IsEmpty() {
			return errors.New("bad posting")
		}
		x.post.set(uint32(t), b)
	}
	if r.err != nil {
		return r.err
	}
	if len(r.b) != 0 {
		return errors.New("trailing bytes")
	}
	x.live = used
	for id := uint32(1); uint64(id) < nids; id++ {
		if !used.Contains(id) {
			x.free = append(x.free, id)
		}
	}
	return nil
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = io.ErrUnexpectedEOF
	}
}

func (r *reader) uv() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) sv() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) byte() byte {
	if len(r.b) < 1 {
		r.fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) bytes(n uint64) []byte {
	if uint64(len(r.b)) < n {
		r.fail()
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}
