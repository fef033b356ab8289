// Package index keeps semfs's per-file records and tags and answers the hybrid
// keyword + embedding query.
//
// The index is a cache of what the data directory holds. Each file's creator,
// creation time, tags and client vector are kept outside the index too, in a
// durable record the daemon keeps with the file (see Saver, Saved and the server
// package's MetaXattr and journal): a tag is saved there before the index
// commits it (Options.Saver), and Reconcile takes every durable record back
// into the index at start. Losing or damaging any file below, or the whole
// directory, loses nothing those records hold; Open reports what it found wrong
// (Damage) so that the daemon can say what it recovered, or refuse to start.
// What only the index holds: updatedAt (rebuilt from the file's mtime) and
// in-process vectors (recomputed from the tags).
//
// Storage, all under the directory given to Open:
//
//   - records.db and vectors.db (buntdb) are the index's own source of truth:
//     records.db one JSON record per file path (createdBy, task, relatedApps,
//     createdAt, updatedAt, ino), vectors.db the files' vectors, per model, as
//     compact binary. Two files so that Open parses them at once (txn.go).
//     Every write is one transaction of both, vectors.db committed first,
//     synced before the method returns, except Apply's (the change stream,
//     whose every change is durable outside the index; see noSync in
//     apply.go): those are synced before Bleve learns their generation. A file
//     buntdb cannot parse is moved aside (<file>.damaged-<time>) and started
//     anew; a records.db cut short (buntdb silently drops a torn last command)
//     is detected by its generation being behind Bleve's. A vector without a
//     record is deleted at Open; a missing one is re-embedded, or restored from
//     the file's durable record by the start-up reconcile.
//   - bleve/ (Bleve, scorch, BM25 scoring) indexes, per record, the folded
//     trigrams of its path, creator, task and apps (the seed rank's candidates),
//     the analysed words of path, task and apps (the best rank's BM25 evidence,
//     words.go) and its whole names (exact-name hits). It is derived from buntdb
//     and rebuilt from it whenever the two disagree at Open (a crash between the
//     buntdb commit and Bleve's background persist), which is logged, or when
//     it was built with another layout (semfs.layout: an older build).
//   - memory: every vector of every known model, contiguous per model, for the
//     exhaustive similarity scan of each query; and every record's folded keyword
//     fields in one slice, against which Bleve's candidates are checked (or which
//     a query with a very common word scans instead: see keywordCandidates).
//     With them, each record's own names (full path, basename with and without
//     extension, creator, related apps; never a directory) and a map from each
//     name to its records (hayTable.byName): the best rank's name hits, kept by every
//     write and rebuilt at Open (Bleve's name field is indexed but not read).
//     Records themselves are read from buntdb for the results only.
//   - lock: a flock held while the index is open; a second Open of the same
//     directory fails instead of corrupting it.
//
// Invariants:
//
//   - Every record has a clean, relative, slash-separated path; a directory's
//     subtree is exactly the records under dir+"/". Records exist for files only.
//   - A write changes buntdb, Bleve and the in-memory vectors under one lock, so
//     readers see all of it or none of it.
//   - RankSeed results equal the exhaustive rule documented on querySeed and in
//     keyword.go; Bleve's tokenisation never changes an answer. RankBest (the
//     default, best.go) ranks a file with an exact-name hit above every file
//     matched by meaning or common words alone. A storage failure is an error,
//     never an empty result.
//   - Contents enter only the best rank, only through Query.Contents
//     (contents.go: the passage index's evidence for one caller), and only as
//     word coverage (kw' = kw + (1 − kw)·ckw, in [0,1]) and as meaning
//     (sem' = max(sem, csem), weighed by λ like tag meaning): the exact-name
//     promise holds with them. Query.Scope "tags" and RankSeed never read them.
//   - Vectors are compared only with vectors of the same model. In-process
//     vectors are computed from tag text (embed's tag text: task, related apps,
//     path; never contents) and kept current in the background after a rename or
//     a model change; client-supplied vectors are stored exactly as sent.
//   - Bad input (path, text, vector, query) is a KindInvalid *Error and changes
//     nothing.
//   - With a Saver, every tag the index commits was saved first, with the
//     record's creator: a durable record is never older than the index's record,
//     so Reconcile lets it win where the two differ.
//
// Concurrency: every exported method of *Index is safe for concurrent use.
// Writes (Create, Touch, Rename, Remove, Tag, Reconcile, Backfill, Apply) are serialised and
// durable when they return (Apply: see noSync); reads (Get, Query, Stats, Dump) run concurrently with
// each other and see every write that returned before they started. Tag and Query
// compute embeddings before taking the lock; Tag calls that arrive while another
// tag is being written share the next write, one pair of syncs for all of them
// (tagqueue.go). A background goroutine (only with an
// in-process embedder) re-embeds tagged records whose vector is stale; it takes
// the write lock only to store what it computed. WaitEmbedded waits for it.
package index
