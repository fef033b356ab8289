package index

import (
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tidwall/buntdb"
)

// The dump format is a gob stream: a dumpHeader, then one dumpItem per buntdb
// record or vector (raw key and value, so paths that are not UTF-8 survive), then
// a final item with End set and the counts, so a truncated dump is detected.
// Bleve is not dumped: Load rebuilds it from the records.
const dumpFormat = "semfs-index-dump"

type dumpHeader struct {
	Format  string
	Version int
}

type dumpItem struct {
	Key, Val string
	End      bool
	Records  int
	Vectors  int
}

// Dump writes a consistent snapshot of every record and vector, taken in one
// buntdb read transaction: a write is either wholly in it or wholly out.
// Read guarantee: concurrent reads proceed; writes wait until Dump returns.
func (x *Index) Dump(w io.Writer) error { return x.DumpKeep(w, nil) }

// DumpKeep is Dump of only the records and vectors of the paths keep accepts
// (nil: every path): a snapshot taken by an app under a policy holds no
// record of a path hidden from it. The dump's counts are of what it holds.
func (x *Index) DumpKeep(w io.Writer, keep func(path string) bool) error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.view("dump", "", func(tx txn) error {
		enc := gob.NewEncoder(w)
		if err := enc.Encode(dumpHeader{Format: dumpFormat, Version: 1}); err != nil {
			return err
		}
		var nr, nv int
		var werr error
		each := func(k, v string) bool {
			if keep != nil && !keep(dumpPath(k)) {
				return true
			}
			if strings.HasPrefix(k, recPrefix) {
				nr++
			} else {
				nv++
			}
			werr = enc.Encode(dumpItem{Key: k, Val: v})
			return werr == nil
		}
		if err := tx.AscendRange("", recPrefix, "r;", each); err != nil {
			return err
		}
		if werr != nil {
			return werr
		}
		if err := tx.vec.AscendRange("", vecPrefix, "v;", each); err != nil {
			return err
		}
		if werr != nil {
			return werr
		}
		return enc.Encode(dumpItem{End: true, Records: nr, Vectors: nv})
	})
}

// Load builds a fresh index in dir (which must be empty or absent) from a Dump and
// opens it with opts: queries then answer exactly as they did on the dumped index
// (same records, same vector bits; Bleve is rebuilt). A malformed or truncated
// dump is KindInvalid and leaves dir as it found it.
func Load(dir string, r io.Reader, opts Options) (*Index, error) {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return nil, errorf("load", KindInvalid, dir, errors.New("target directory is not empty"))
	} else if err != nil && !os.IsNotExist(err) {
		return nil, ioErr("load", dir, err)
	}
	if err := loadRecords(dir, r); err != nil {
		_ = os.Remove(filepath.Join(dir, recordsFile))
		_ = os.Remove(filepath.Join(dir, vectorsFile))
		_ = os.Remove(filepath.Join(dir, "lock"))
		return nil, err
	}
	return Open(dir, opts)
}

func loadRecords(dir string, r io.Reader) error {
	dec := gob.NewDecoder(r)
	var h dumpHeader
	if err := dec.Decode(&h); err != nil || h.Format != dumpFormat || h.Version != 1 {
		return errorf("load", KindInvalid, dir, fmt.Errorf("not an index dump (%v)", err))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ioErr("load", dir, err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return ioErr("load", dir, err)
	}
	defer lock.Close()
	db, err := buntdb.Open(filepath.Join(dir, recordsFile))
	if err != nil {
		return ioErr("load", dir, err)
	}
	vdb, err := buntdb.Open(filepath.Join(dir, vectorsFile))
	if err != nil {
		_ = db.Close()
		return ioErr("load", dir, err)
	}
	bad := func(format string, a ...any) error {
		return errorf("load", KindInvalid, dir, fmt.Errorf(format, a...))
	}
	err = updateBoth(db, vdb, func(tx txn) error {
		var nr, nv int
		for {
			var it dumpItem
			if err := dec.Decode(&it); err != nil {
				return bad("truncated or corrupt dump after %d records and %d vectors: %v", nr, nv, err)
			}
			if it.End {
				if it.Records != nr || it.Vectors != nv {
					return bad("dump says %d records and %d vectors, holds %d and %d", it.Records, it.Vectors, nr, nv)
				}
				break
			}
			to := tx.Tx
			switch {
			case strings.HasPrefix(it.Key, recPrefix):
				p := it.Key[len(recPrefix):]
				if checkPath("load", p) != nil {
					return bad("invalid path %q", p)
				}
				if _, err := decodeStored(it.Val); err != nil {
					return bad("record %q: %v", p, err)
				}
				nr++
			case strings.HasPrefix(it.Key, vecPrefix):
				p, m, ok := splitVecKey(it.Key)
				if !ok || checkPath("load", p) != nil || m == "" {
					return bad("invalid vector key %q", it.Key)
				}
				if _, err := decodeVector(it.Val); err != nil {
					return bad("vector %q: %v", it.Key, err)
				}
				nv++
				to = tx.vec
			default:
				return bad("unexpected key %q", it.Key)
			}
			if _, _, err := to.Set(it.Key, it.Val, nil); err != nil {
				return err
			}
		}
		if _, _, err := tx.Set(schemaKey, schemaVers, nil); err != nil {
			return err
		}
		// Bleve does not exist yet: any generation makes Open build it.
		_, _, err := tx.Set(genKey, "1", nil)
		return err
	})
	cerr := errors.Join(vdb.Close(), db.Close())
	if err != nil {
		return ioErr("load", dir, err)
	}
	return ioErr("load", dir, cerr)
}

// dumpPath is the path a record or vector key belongs to.
func dumpPath(k string) string {
	if p, _, ok := splitVecKey(k); ok {
		return p
	}
	return strings.TrimPrefix(k, recPrefix)
}
