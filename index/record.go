package index

import (
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"
)

// Record is the metadata the index keeps for one file. Results carry exactly this.
type Record struct {
	Path        string    `json:"path"`        // slash-separated, relative to the backing dir
	CreatedBy   string    `json:"createdBy"`   // "" = unattributed
	Task        string    `json:"task"`        // "" = untagged
	RelatedApps []string  `json:"relatedApps"` // never nil: [] in JSON
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// Tagged reports whether the record carries tags (a task or a related app).
func (r Record) Tagged() bool { return r.Task != "" || len(r.RelatedApps) > 0 }

// Result is one query answer: the record and its score. With RankSeed the score
// is keyword points + similarity; with RankBest it is the number of exact-name
// hits + the fused score in [0, 1] (best.go).
type Result struct {
	Record
	Score float64 `json:"score"`
	// Explain says why the file matched; set only when the query asked.
	Explain *Explanation `json:"explain,omitempty"`
	// Passages are the file's best passages when its contents matched (best
	// rank with Query.Contents; contents.go).
	Passages []Passage `json:"passages,omitempty"`
}

// Explanation is why a file matched a query.
type Explanation struct {
	Rank string `json:"rank"`
	// Names are the query words equal to a name of the file (its full path,
	// its basename with or without extension, its creator or a related app;
	// never a directory): each lifts the file above every file matched by
	// meaning or stop words alone (best only; see docs/query.md).
	Names []string `json:"names,omitempty"`
	// Words are the analysed query words found in each field ("path", "task",
	// "apps"; seed: "any", the words that are substrings of some field).
	Words map[string][]string `json:"words,omitempty"`
	// Keyword is the keyword evidence: best, the IDF-weighted share of the
	// query's words matched, each by its Bleve BM25 score relative to the best
	// file for that word, in [0, 1]; seed, the points.
	Keyword float64 `json:"keyword"`
	// Similarity is the clamped cosine of the query and file vectors (absent
	// when either has none); Semantic (best) is it relative to the query's
	// closest file and the corpus mean, in [0, 1].
	Similarity *float64 `json:"similarity,omitempty"`
	Semantic   float64  `json:"semantic,omitempty"`
}

// Vector is an embedding computed by a client (or the query's own vector). Model
// must be one of Options.Models or the in-process embedder's model.
type Vector struct {
	Model  string    `json:"model"`
	Values []float32 `json:"vector"`
}

// Query is a hybrid query. Limit <= 0 returns every match. Vector, when set, is
// used instead of embedding Text in-process and is ranked against the stored
// vectors of Vector.Model.
type Query struct {
	Text   string
	Limit  int
	Vector *Vector
	// Rank is the ranking rule: RankBest (also what "" means) or RankSeed.
	// Any other value is KindInvalid.
	Rank string
	// Explain adds to each result why it matched (Result.Explain).
	Explain bool
	// Fusion overrides the best rank's weights of meaning; nil (what every
	// client gets) means the calibrated ones. For calibration (index/eval).
	Fusion *Fusion
	// Scope is ScopeAll ("") or ScopeTags; any other value is KindInvalid.
	// Contents, when set and Scope is ScopeAll, adds the files' contents to
	// the best rank's evidence (contents.go); the seed rank never reads it.
	Scope    string
	Contents ContentSource
	// Now is the moment the best rank reads the text's relative dates
	// against ("this year", "last year"); zero, what every client gets,
	// means the clock at the query. For fixed figures (index/eval).
	Now time.Time
}

// Fusion is the weight of meaning in the best rank (best.go): Tie when some
// file covers at least Weak of the query's words (IDF-weighted), rising
// linearly to Tie + Rescue when no file matches any of them (Weak <= 0: Tie
// always).
type Fusion struct{ Tie, Rescue, Weak float64 }

// The ranking rules a Query can ask for.
const (
	RankBest = "best" // the default: analysed words (BM25) fused with meaning; see best.go
	RankSeed = "seed" // the seed's rule, unchanged: substring points + similarity; see query.go
)

// FileState is what the daemon sees on disk at start: regular files and symlinks only.
type FileState struct {
	Path    string
	Ino     uint64
	Size    int64
	ModTime time.Time
	Mode    uint32 // permission bits (server.UnixPerm); 0 unknown
	// Saved is the file's durable record, nil when it has none. Reconcile
	// takes the creator, creation time and tags from it.
	Saved *Saved
}

// stored is the buntdb value of a record (the path is the key). Seen is the
// size/mtime the last Reconcile observed; Touch clears it because a write through
// the server makes it stale and the index is not told the new size.
type stored struct {
	CreatedBy   string    `json:"createdBy"`
	Task        string    `json:"task"`
	RelatedApps []string  `json:"relatedApps"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	Ino         uint64    `json:"ino"`
	// Mode is the file's permission bits (server.UnixPerm) as the core set
	// them or a Reconcile saw them; 0 unknown (older records). Kept so that
	// a host's chmod is told apart (ReconcileReport.Chmod).
	Mode uint32 `json:"mode,omitempty"`
	Seen *seen  `json:"seen,omitempty"`
}

type seen struct {
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
}

func (s *stored) tagged() bool { return s.Task != "" || len(s.RelatedApps) > 0 }

func (s *stored) record(path string) Record {
	apps := s.RelatedApps
	if apps == nil {
		apps = []string{}
	}
	return Record{Path: path, CreatedBy: s.CreatedBy, Task: s.Task, RelatedApps: apps,
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
}

func (s *stored) encode() string {
	if s.RelatedApps == nil {
		s.RelatedApps = []string{}
	}
	if b, ok := appendStored(make([]byte, 0, 160), s); ok {
		return string(b)
	}
	return marshalStored(s)
}

func decodeStored(v string) (*stored, error) {
	if s, ok := parseStored(v); ok {
		if s.RelatedApps == nil {
			s.RelatedApps = []string{}
		}
		return s, nil
	}
	s := new(stored)
	if err := json.Unmarshal([]byte(v), s); err != nil {
		return nil, err
	}
	if s.RelatedApps == nil {
		s.RelatedApps = []string{}
	}
	return s, nil
}

// stamp normalises a time for storage: UTC, no monotonic reading, so that a
// record read back compares equal (==) to one built from the same input.
func stamp(t time.Time) time.Time { return t.Round(0).UTC() }

// checkPath accepts the clean, relative, slash-separated paths the server hands
// out and nothing else, so that prefix operations (path + "/") are exact.
func checkPath(op, p string) error {
	if p == "" || p[0] == '/' || p[len(p)-1] == '/' || strings.IndexByte(p, 0) >= 0 {
		return errorf(op, KindInvalid, p, ErrInvalidPath)
	}
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." {
			return errorf(op, KindInvalid, p, ErrInvalidPath)
		}
	}
	return nil
}

func checkText(op, path string, texts ...string) error {
	for _, t := range texts {
		if !utf8.ValidString(t) {
			return errorf(op, KindInvalid, path, ErrInvalidText)
		}
	}
	return nil
}
