package passage

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"time"
)

// fileName is the index's one file in Options.Dir.
const fileName = "passages.gob"

// layout changes whenever what is saved changes meaning: an older file is
// discarded (read again from the files).
const layout = 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// saved is the on-disk form: offsets, words and vectors; never text.
type saved struct {
	Layout int
	Model  string
	Files  []savedFile
}

type savedFile struct {
	Path        string
	Size, MTime int64
	Passages    []savedPass
}

type savedPass struct {
	Line, Lines, Start, End, Words int32
	Hash                           uint64
	Terms                          []string
	TF                             []uint16
	Vec                            []float32
}

// Save writes the index whole to a temporary file and renames it over the old
// one.
func (x *Index) Save() error {
	x.mu.Lock()
	x.drainLocked()
	// Each live passage's words, from the postings (memory holds them only
	// there).
	termsOf := make([][]termTF, len(x.passes))
	for t, pl := range x.post {
		for i, id := range pl.ids {
			if x.meta[id].fid != 0 {
				termsOf[id] = append(termsOf[id], termTF{t, pl.tf[i]})
			}
		}
	}
	s := saved{Layout: layout, Model: x.model, Files: make([]savedFile, 0, len(x.files))}
	for p, e := range x.files {
		sf := savedFile{Path: p, Size: e.size, MTime: e.mtime, Passages: make([]savedPass, 0, len(e.pids))}
		for _, id := range e.pids {
			ps := x.passes[id]
			ts := termsOf[id]
			sp := savedPass{Line: ps.span.line, Lines: ps.span.lines, Start: ps.span.start, End: ps.span.end, Words: ps.words, Hash: ps.hash, Vec: ps.vec,
				Terms: make([]string, len(ts)), TF: make([]uint16, len(ts))}
			for i, t := range ts {
				sp.Terms[i], sp.TF[i] = t.term, t.tf
			}
			sf.Passages = append(sf.Passages, sp)
		}
		s.Files = append(s.Files, sf)
	}
	x.changed = false
	x.mu.Unlock()

	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(&s); err != nil {
		return fmt.Errorf("passage index: encoding: %w", err)
	}
	b.Write(binary.LittleEndian.AppendUint32(nil, crc32.Checksum(b.Bytes(), castagnoli)))
	final := filepath.Join(x.opt.Dir, fileName)
	tmp := fmt.Sprintf("%s.tmp-%d", final, time.Now().UnixNano())
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("passage index: saving: %w", err)
	}
	w := bufio.NewWriter(f)
	_, err = w.Write(b.Bytes())
	err = errors.Join(err, w.Flush(), f.Sync(), f.Close())
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		os.Remove(tmp)
		x.mu.Lock()
		x.changed = true
		x.mu.Unlock()
		return fmt.Errorf("passage index: saving: %w", err)
	}
	return nil
}

// load reads the saved index; any damage is an error (the caller starts
// empty). Precondition: x not shared yet.
func (x *Index) load() error {
	b, err := os.ReadFile(filepath.Join(x.opt.Dir, fileName))
	if err != nil {
		return err
	}
	if len(b) < 4 {
		return errors.New("truncated")
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return errors.New("checksum mismatch")
	}
	var s saved
	if err := gob.NewDecoder(bytes.NewReader(body)).Decode(&s); err != nil {
		return fmt.Errorf("decoding: %w", err)
	}
	if s.Layout != layout {
		return fmt.Errorf("layout %d, want %d", s.Layout, layout)
	}
	x.model = s.Model
	for _, sf := range s.Files {
		if sf.Path == "" || x.files[sf.Path] != nil {
			return fmt.Errorf("bad or repeated path %q", sf.Path)
		}
		e := &file{path: sf.Path, size: sf.Size, mtime: sf.MTime}
		x.newFidLocked(e)
		for _, sp := range sf.Passages {
			if len(sp.Terms) != len(sp.TF) || sp.Start < 0 || sp.End < sp.Start || int64(sp.End) > sf.Size {
				return fmt.Errorf("bad passage in %q", sf.Path)
			}
			id := x.newPidLocked()
			x.passes[id] = pass{path: sf.Path, span: span{line: sp.Line, lines: sp.Lines, start: sp.Start, end: sp.End}, words: sp.Words, hash: sp.Hash}
			x.meta[id] = pmeta{fid: e.fid, words: sp.Words}
			for i, t := range sp.Terms {
				x.postLocked(t, id, sp.TF[i])
			}
			if sp.Vec != nil {
				x.setVecLocked(id, sp.Vec)
			}
			e.pids = append(e.pids, id)
			x.words += int64(sp.Words)
			x.live++
		}
		x.files[sf.Path] = e
		x.bytes += sf.Size
	}
	return nil
}
