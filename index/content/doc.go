// Package content keeps semfs's content index: for every regular file of the
// export, tagged or not, which trigrams (three consecutive bytes) its text
// holds, and answers exact grep from it in two stages: the trigram query
// derived from the regular expression selects candidate files (query.go), then
// Go's regexp matches the candidates line by line (grep.go). The index may
// over-match, never miss: a pattern without a required trigram scans every
// file.
//
// Glossary:
//
//   - trigram: three consecutive bytes of a file's UTF-8 text, packed into the
//     low 24 bits of a uint32 (b0<<16 | b1<<8 | b2).
//   - posting: the set of file ids whose text holds one trigram, a roaring
//     bitmap. No positions and no file contents are stored: the files are on
//     disk.
//   - file id: a uint32 naming one indexed version of one path. A path
//     re-indexed gets a new id; the old one is dead (in the dead bitmap) until
//     compaction removes it from every posting and frees it.
//   - dirty: a path whose latest bytes are not indexed yet (written since its
//     last indexing, or waiting for the indexer). Grep reads dirty paths
//     directly, so an answer never depends on how far the indexer has got.
//   - skipped: a regular file not content-indexed, by reason (too big, binary,
//     not UTF-8). Grep reads skipped files only when asked to ("all").
//   - table: an index's entries by path (Table; this index and the passage
//     index each keep one), in a map and in byte order, so that a removal,
//     rename or scoped reconcile touches the entries below one directory,
//     not every entry.
//
// Storage: one file, content.idx, in the directory given to Open (the daemon's
// index directory, beside the tag index), written whole to a temporary file
// and renamed over the old one (Save), with a CRC-32C of everything before it.
// A missing, truncated or damaged file is discarded at Open (Damaged says so),
// and the start-up reconcile then indexes every file again from the backing
// directory: the index holds nothing the files do not.
//
// The index reads files only through the Files it is given (the daemon's
// containment-safe core: no path is joined on the host, no symlink is
// followed, the .semfs namespace is never entered).
package content
