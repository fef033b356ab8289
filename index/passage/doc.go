// Package passage keeps semfs's meaning-over-contents index: every content-
// indexable file of the export (the content package's rules: within the size
// cap, no NUL in its first 8 KiB, valid UTF-8) split into passages, each with
// its words for BM25 and, in the background, its embedding from the
// in-process model. The best rank (index, Query.Contents) asks it for a
// query's content evidence: per file, its best passages by words and by
// meaning, with their line numbers and text.
//
// Glossary:
//
//   - passage: a run of whole lines of one file, about passageWords words,
//     cut where the file has a boundary (a blank line, a Markdown heading, a
//     line that starts a function or type at column 0), at a line otherwise
//     (split.go). Named by its first line (1-based) and its byte range.
//   - pid: a uint32 naming one passage of one indexed version of a file. A
//     file read again gets new pids; the old ones are dead until compaction.
//   - fid: a uint32 naming one indexed version of a file (its entry), so
//     that a query groups passages by file without hashing paths.
//   - sign bits: a vector's components' signs, 64 bytes at 512 d; the
//     Hamming distance between two vectors' sign bits estimates their angle.
//   - coarse pass: above 2,048 vectors, the meaning stage's scan of every
//     passage's sign bits for the nearest (a 32nd of them, 512 to 4,000),
//     whose exact cosines pick the files closest by meaning (meaning.go).
//   - coverage: the IDF-weighted share of the query's words a passage holds,
//     each moved by at most a tenth by its BM25 strength (the best rank's kw,
//     applied to one passage instead of a file's tags).
//
// What is stored: per file its size, mtime and passages (line, byte range,
// word count, a hash of its text), per passage its words' frequencies (the
// postings) and its vector. In memory the frequencies are kept only in the
// postings (word -> pids and counts), and every vector's sign bits beside it.
//
// A query's cost: the word stage reads the postings of the query's words
// (dense per-pid sums, no map, no sort of every match), the meaning stage
// the sign bits of every passage and the exact vectors of a few thousand
// (meaning.go); TestPassageScale measures both at 50,000 real files. No
// text is stored: an answer reads a passage from the file, as the caller,
// when it is asked for (Source), keeps the bytes read for the next answer
// of that same version of the file (texts.go: at most 4 MiB, in memory),
// shows at most 480 bytes of it where the query's words are densest
// (snippet.go), and drops a file whose size or mtime changed since it was
// indexed (it is queued again).
//
// Storage: passages.gob in the directory given to Open (the daemon's index
// directory), written whole to a temporary file and renamed, with a CRC-32C
// trailer. Missing or damaged, it is discarded at Open (Damaged), and the
// start-up reconcile reads every file again; a file whose size and mtime did
// not change keeps its vectors across restarts, and a passage whose text did
// not change keeps its vector when its file is rewritten.
//
// CPU: one worker goroutine reads, splits and embeds (embed.Serial: the forward
// passes too), a file at a time, on an
// OS thread it lowers to nice 19, and after each file's reading and splitting
// and each embedding call sleeps long enough that its work takes at most
// Options.CPU of one core. The change stream (Apply) only queues paths; no
// protocol reply waits for it. A query reads the index under its read lock
// and the passages' text from the files, never waiting for the worker's
// reads or embeddings (the worker holds the lock only to install results).
package passage
