package server

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// MetaXattr is the user extended attribute that keeps a file's durable record
// with the file itself: who created it, when, and its tags. The index is a cache
// of these records (see the index package); after losing any index file the
// daemon rebuilds the index from them. One name holds the whole record, as
// versioned compact JSON, so that a record is written and read with one system
// call and is never half old, half new. It is not under "user.semfs." on
// purpose: that prefix is left for per-field virtual attributes a front end may
// show clients (user.semfs.task, …), which this real one must not be taken for.
// Clients never see or set it: the front ends do not pass extended attributes
// through.
//
// The record travels with the file's data: renames keep it, hard links share
// it, and a copy that keeps extended attributes (cp -a, rsync -X, tar --xattrs,
// a restore of the whole data directory) carries the original's creator and
// tags. That is the rule, not an accident: created_by names the app that
// created the content, and a backup restored onto new inodes must keep it. A
// copy made without them (plain cp) is a new file: unattributed, untagged.
// Anyone who can write the file's user attributes on the host (its owner,
// root) can change its record; the daemon takes it at its next start. The
// backing directory is trusted that far, as it is for the data itself.
const MetaXattr = "user.semfs"

// metaVersion is the layout of MetaXattr and of journal records. A record of
// another version is unreadable to this build and reported as such, never
// guessed at.
const metaVersion = 1

// MaxMetaSize bounds one encoded record. ext4 keeps all extended attributes of
// an inode in one block (4 KiB); a larger record (a long task with a client
// vector) goes to the journal instead.
const MaxMetaSize = 64 << 10

// Meta is a file's durable record: what the index holds for it that cannot be
// read back from the file system itself.
type Meta struct {
	CreatedBy   string      // "" = unattributed
	CreatedAt   time.Time   // zero when unknown
	Task        string      // "" = untagged
	RelatedApps []string    // nil = none
	Vector      *MetaVector // the client-supplied embedding of the tags, if any
}

// MetaVector is a client-supplied embedding, stored exactly as sent.
type MetaVector struct {
	Model  string
	Values []float32
}

// Tagged reports whether the record carries tags.
func (m Meta) Tagged() bool { return m.Task != "" || len(m.RelatedApps) > 0 }

// IsZero reports whether the record says nothing.
func (m Meta) IsZero() bool {
	return m.CreatedBy == "" && m.CreatedAt.IsZero() && !m.Tagged() && m.Vector == nil
}

// metaWire is Meta's stored form: short keys, time in Unix nanoseconds, the
// vector as base64 of little-endian float32 (a 384-d vector is 2 KiB, not 8 as
// JSON numbers).
type metaWire struct {
	V     int      `json:"v"`
	By    string   `json:"by,omitempty"`
	At    int64    `json:"at,omitempty"`
	Task  string   `json:"task,omitempty"`
	Apps  []string `json:"apps,omitempty"`
	Model string   `json:"vm,omitempty"`
	Vec   string   `json:"vv,omitempty"`
}

func (m Meta) encode() []byte {
	w := metaWire{V: metaVersion, By: m.CreatedBy, Task: m.Task, Apps: m.RelatedApps}
	if !m.CreatedAt.IsZero() {
		w.At = m.CreatedAt.UnixNano()
	}
	if m.Vector != nil {
		b := make([]byte, 4*len(m.Vector.Values))
		for i, f := range m.Vector.Values {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
		}
		w.Model, w.Vec = m.Vector.Model, base64.RawStdEncoding.EncodeToString(b)
	}
	b, err := json.Marshal(w)
	if err != nil {
		panic("server: marshal meta: " + err.Error()) // plain strings and ints only
	}
	return b
}

var errMetaVersion = errors.New("durable record of an unknown version")

func decodeMeta(b []byte) (Meta, error) {
	var w metaWire
	if err := json.Unmarshal(b, &w); err != nil {
		return Meta{}, fmt.Errorf("durable record: %w", err)
	}
	if w.V != metaVersion {
		return Meta{}, fmt.Errorf("%w (%d)", errMetaVersion, w.V)
	}
	m := Meta{CreatedBy: w.By, Task: w.Task, RelatedApps: w.Apps}
	if w.At != 0 {
		m.CreatedAt = time.Unix(0, w.At).UTC()
	}
	if w.Model != "" {
		b, err := base64.RawStdEncoding.DecodeString(w.Vec)
		if err != nil || len(b)%4 != 0 {
			return Meta{}, fmt.Errorf("durable record: vector of model %q is malformed", w.Model)
		}
		v := make([]float32, len(b)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		m.Vector = &MetaVector{Model: w.Model, Values: v}
	}
	return m, nil
}
