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
// discarded (read again from the files), but for layout 1, which is read.
// Layout 2 stores each distinct text's words and vector once; layout 1 stored
// them with every passage (313 MB for the mixed load's 102,350 copies of 22
// pages), and its vectors are worth keeping across the upgrade.
const layout = 2

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// saved is the on-disk form: offsets, words and vectors; never text.
type saved struct {
	Layout int
	Model  string
	Words  int // wordsVersion: the analysis Texts' terms were made by (0: an older one)
	Texts  []savedText
	Files  []savedFile
}

// savedText is what passages of one text share: their words and vector.
type savedText struct {
	Hash  uint64
	Words int32
	Terms []string
	TF    []uint16
	Vec   []float32
}

type savedFile struct {
	Path        string
	Size, MTime int64
	Passages    []savedPass
}

type savedPass struct {
	Line, Lines, Start, End int32
	Text                    uint32 // its index in saved.Texts

	// Layout 1's passage held its text's words and vector itself: read
	// (asLayout2), never written.
	Words int32
	Hash  uint64
	Terms []string
	TF    []uint16
	Vec   []float32
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
	s := saved{Layout: layout, Model: x.model, Words: wordsVersion, Files: make([]savedFile, 0, x.files.Len())}
	// A passage's text is one already saved when its hash, vector array
	// (copies share one: setVecLocked), words and terms are that one's; the
	// terms of equal texts come from the postings in one order.
	// texts: the last saved text of a key, plus one; earlier: each text's
	// previous of its key, plus one (a key has one text but for collisions).
	texts, earlier := make(map[textKey]uint32, x.vids), []uint32(nil)
	textOf := func(ps *pass, ts []termTF) uint32 {
		k := textKey{hash: ps.hash}
		if ps.vec != nil {
			k.vec = &ps.vec[0]
		}
		for i := texts[k]; i != 0; i = earlier[i-1] {
			if st := &s.Texts[i-1]; st.Words == ps.words && sameTerms(st, ts) {
				return i - 1
			}
		}
		st := savedText{Hash: ps.hash, Words: ps.words, Vec: ps.vec, Terms: make([]string, len(ts)), TF: make([]uint16, len(ts))}
		for i, t := range ts {
			st.Terms[i], st.TF[i] = t.term, t.tf
		}
		s.Texts = append(s.Texts, st)
		earlier = append(earlier, texts[k])
		texts[k] = uint32(len(s.Texts))
		return uint32(len(s.Texts) - 1)
	}
	for p, e := range x.files.All() {
		if e.oldWords {
			s.Words = 0 // an older analysis's words: read all again at the next Open
		}
		sf := savedFile{Path: p, Size: e.size, MTime: e.mtime, Passages: make([]savedPass, 0, len(e.pids))}
		for _, id := range e.pids {
			ps := &x.passes[id]
			sf.Passages = append(sf.Passages, savedPass{Line: ps.span.line, Lines: ps.span.lines, Start: ps.span.start, End: ps.span.end,
				Text: textOf(ps, termsOf[id])})
		}
		s.Files = append(s.Files, sf)
	}
	x.changed = false
	x.mu.Unlock()

	b, err := s.encode()
	if err != nil {
		return fmt.Errorf("passage index: encoding: %w", err)
	}
	final := filepath.Join(x.opt.Dir, fileName)
	tmp := fmt.Sprintf("%s.tmp-%d", final, time.Now().UnixNano())
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("passage index: saving: %w", err)
	}
	w := bufio.NewWriter(f)
	_, err = w.Write(b)
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
	s, err := decodeSaved(b)
	if err != nil {
		return err
	}
	if s.Layout == 1 {
		s.asLayout2()
	}
	if s.Layout != layout {
		return fmt.Errorf("layout %d, want %d", s.Layout, layout)
	}
	x.model = s.Model
	oldWords := s.Words != wordsVersion // Open queues these files to be read again
	for _, st := range s.Texts {
		if len(st.Terms) != len(st.TF) {
			return errors.New("bad text: terms and counts differ in length")
		}
	}
	for _, sf := range s.Files {
		if sf.Path == "" || x.files.At(sf.Path) != nil {
			return fmt.Errorf("bad or repeated path %q", sf.Path)
		}
		e := &file{path: sf.Path, size: sf.Size, mtime: sf.MTime, oldWords: oldWords}
		x.newFidLocked(e)
		for _, sp := range sf.Passages {
			if int(sp.Text) >= len(s.Texts) || sp.Start < 0 || sp.End < sp.Start || int64(sp.End) > sf.Size {
				return fmt.Errorf("bad passage in %q", sf.Path)
			}
			st := &s.Texts[sp.Text]
			id := x.newPidLocked()
			x.passes[id] = pass{path: sf.Path, span: span{line: sp.Line, lines: sp.Lines, start: sp.Start, end: sp.End}, words: st.Words, hash: st.Hash}
			x.meta[id] = pmeta{fid: e.fid, words: st.Words}
			for i, t := range st.Terms {
				x.postLocked(t, id, st.TF[i])
			}
			if st.Vec != nil {
				x.setVecLocked(id, st.Vec)
			}
			e.pids = append(e.pids, id)
			x.words += int64(st.Words)
			x.live++
		}
		x.files.Put(sf.Path, e)
		x.bytes += sf.Size
	}
	return nil
}

// textKey finds the saved texts a passage's may be: its hash and its vector's
// array.
type textKey struct {
	hash uint64
	vec  *float32
}

// sameTerms reports whether st holds exactly the terms ts, in ts's order.
func sameTerms(st *savedText, ts []termTF) bool {
	if len(st.Terms) != len(ts) {
		return false
	}
	for i, t := range ts {
		if st.Terms[i] != t.term || st.TF[i] != t.tf {
			return false
		}
	}
	return true
}

// asLayout2 moves each passage's words and vector of a layout-1 file to a
// text of its own (not shared: Save shares them from then on).
func (s *saved) asLayout2() {
	s.Texts = nil
	for i := range s.Files {
		for j := range s.Files[i].Passages {
			sp := &s.Files[i].Passages[j]
			sp.Text = uint32(len(s.Texts))
			s.Texts = append(s.Texts, savedText{Hash: sp.Hash, Words: sp.Words, Terms: sp.Terms, TF: sp.TF, Vec: sp.Vec})
			sp.Hash, sp.Words, sp.Terms, sp.TF, sp.Vec = 0, 0, nil, nil, nil
		}
	}
	s.Layout = 2
}

// encode is s as saved: gob, then a CRC-32C of it.
func (s *saved) encode() ([]byte, error) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(s); err != nil {
		return nil, err
	}
	return binary.LittleEndian.AppendUint32(b.Bytes(), crc32.Checksum(b.Bytes(), castagnoli)), nil
}

// decodeSaved is encode's inverse; a torn or damaged file is an error.
func decodeSaved(b []byte) (saved, error) {
	var s saved
	if len(b) < 4 {
		return s, errors.New("truncated")
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return s, errors.New("checksum mismatch")
	}
	if err := gob.NewDecoder(bytes.NewReader(body)).Decode(&s); err != nil {
		return s, fmt.Errorf("decoding: %w", err)
	}
	return s, nil
}
