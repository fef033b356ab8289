package index

import (
	"strconv"
	"strings"

	"github.com/tidwall/buntdb"
)

// buntdb layout (buntdb is the source of truth; Bleve and the in-memory vectors
// are derived from it), in two files (txn):
//
//	records.db:
//	r:<path>              record JSON (see stored)
//	m:gen                 Bleve generation: bumped by every write that changes
//	                      indexed text, copied into Bleve with the same change
//	m:schema              layout version
//	m:damage              damage an Open found (or MarkDamaged), kept until
//	                      ClearDamage: a start that stops before recovering
//	                      must not leave a sound-looking index behind
//
//	vectors.db:
//	v:<path>\x00<model>   vector (see encodeVector)
//
// Paths are clean, so the subtree of dir is exactly the keys in
// [prefix+dir+"/", prefix+dir+"0"): '0' is the byte after '/'.
const (
	recPrefix  = "r:"
	vecPrefix  = "v:"
	genKey     = "m:gen"
	schemaKey  = "m:schema"
	damageKey  = "m:damage" // damage found at an Open, until ClearDamage
	schemaVers = "2"
	// schemaWithVectors is the layout before vectors.db: vectors in
	// records.db. Open moves them (migrateVectors).
	schemaWithVectors = "1"
)

func recKey(path string) string { return recPrefix + path }

func vecKey(path, model string) string { return vecPrefix + path + "\x00" + model }

// splitVecKey returns path and model of a vector key.
func splitVecKey(k string) (path, model string, ok bool) {
	k = strings.TrimPrefix(k, vecPrefix)
	i := strings.IndexByte(k, 0)
	if i < 0 {
		return "", "", false
	}
	return k[:i], k[i+1:], true
}

type kv struct{ key, val string }

// scanRange collects the items with ge <= key < lt. buntdb forbids changing keys
// while iterating, so callers get a copy.
func scanRange(tx *buntdb.Tx, ge, lt string) ([]kv, error) {
	var out []kv
	err := tx.AscendRange("", ge, lt, func(k, v string) bool {
		out = append(out, kv{k, v})
		return true
	})
	return out, err
}

// recordsUnder returns the record at path and those under path+"/".
func recordsUnder(tx *buntdb.Tx, path string) ([]kv, error) {
	var out []kv
	v, err := tx.Get(recKey(path))
	switch err {
	case nil:
		out = append(out, kv{recKey(path), v})
	case buntdb.ErrNotFound:
	default:
		return nil, err
	}
	sub, err := scanRange(tx, recKey(path+"/"), recKey(path+"0"))
	return append(out, sub...), err
}

// vectorsOf returns the vectors stored for exactly path (tx: vectors.db's).
func vectorsOf(tx *buntdb.Tx, path string) ([]kv, error) {
	return scanRange(tx, vecPrefix+path+"\x00", vecPrefix+path+"\x01")
}

// vectorsUnder returns the vectors of path and of everything under path+"/"
// (tx: vectors.db's).
func vectorsUnder(tx *buntdb.Tx, path string) ([]kv, error) {
	out, err := vectorsOf(tx, path)
	if err != nil {
		return nil, err
	}
	sub, err := scanRange(tx, vecPrefix+path+"/", vecPrefix+path+"0")
	return append(out, sub...), err
}

func getRecord(tx *buntdb.Tx, path string) (*stored, bool, error) {
	v, err := tx.Get(recKey(path))
	if err == buntdb.ErrNotFound {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	s, err := decodeStored(v)
	if err != nil {
		return nil, false, err
	}
	return s, true, nil
}

func readGen(tx *buntdb.Tx) (uint64, error) {
	v, err := tx.Get(genKey)
	if err == buntdb.ErrNotFound {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(v, 10, 64)
}
