// Package index keeps semfs's per-file records and tags and answers the hybrid
// keyword + embedding query.
//
// Storage, all under the directory given to Open:
//
//   - records.db (buntdb) is the source of truth: one JSON record per file path
//     (createdBy, task, relatedApps, createdAt, updatedAt, ino) and the files'
//     vectors, per model, as compact binary. Every write is one buntdb
//     transaction, synced before the method returns.
//   - bleve/ (Bleve, scorch) indexes the folded trigrams of each record's path,
//     creator, task and apps. It only proposes keyword candidates; it is derived
//     from buntdb and rebuilt from it whenever the two disagree at Open (a crash
//     between the buntdb commit and Bleve's background persist), which is logged.
//   - memory: every vector of every known model, contiguous per model, for the
//     exhaustive similarity scan of each query; and every record's folded keyword
//     fields in one slice, against which Bleve's candidates are checked (or which
//     a query with a very common word scans instead: see keywordCandidates).
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
//   - Query results equal the exhaustive rule documented on Query and in
//     keyword.go; Bleve's tokenisation never changes an answer. A storage failure
//     is an error, never an empty result.
//   - Vectors are compared only with vectors of the same model. In-process
//     vectors are computed from tag text (embed's tag text: task, related apps,
//     path; never contents) and kept current in the background after a rename or
//     a model change; client-supplied vectors are stored exactly as sent.
//   - Bad input (path, text, vector, query) is a KindInvalid *Error and changes
//     nothing.
//
// Concurrency: every exported method of *Index is safe for concurrent use.
// Writes (Create, Touch, Rename, Remove, Tag, Reconcile) are serialised and
// durable when they return; reads (Get, Query, Stats, Dump) run concurrently with
// each other and see every write that returned before they started. Tag and Query
// compute embeddings before taking the lock. A background goroutine (only with an
// in-process embedder) re-embeds tagged records whose vector is stale; it takes
// the write lock only to store what it computed. WaitEmbedded waits for it.
package index
