package index

import "github.com/tidwall/buntdb"

// txn is one index transaction over its two buntdb files: records.db (records
// and the m: keys; the embedded Tx) and vectors.db (vec). They are two files
// so that Open parses them at once, one core each: at 100,000 tagged files
// vectors are nine tenths of the bytes, and buntdb parses a file on one
// goroutine (records.db with both took 330-620 ms, alone 76-113 ms; the
// vectors alone 238-263 ms beside it).
//
// A write commits vectors.db first, then records.db with the generation
// (Index.write): a crash between the two leaves vectors the records do not
// yet explain, never a record that claims a vector it lacks. Open drops a
// vector without a record from memory (placeVectors), re-embeds an
// in-process vector whose text changed (reembed.go), and the start-up
// reconcile restores client vectors from the files' durable records.
type txn struct {
	*buntdb.Tx            // records.db
	vec        *buntdb.Tx // vectors.db
}

// updateBoth runs fn in a write transaction of both files: vectors.db commits
// when fn returns, records.db after it. The order of locks is records.db, then
// vectors.db, everywhere.
func updateBoth(rdb, vdb *buntdb.DB, fn func(tx txn) error) error {
	return rdb.Update(func(rt *buntdb.Tx) error {
		return vdb.Update(func(vt *buntdb.Tx) error { return fn(txn{rt, vt}) })
	})
}

// viewBoth runs fn in a read transaction of both files.
func viewBoth(rdb, vdb *buntdb.DB, fn func(tx txn) error) error {
	return rdb.View(func(rt *buntdb.Tx) error {
		return vdb.View(func(vt *buntdb.Tx) error { return fn(txn{rt, vt}) })
	})
}
