package differential

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
)

// Result is what one step answered: its status, in the protocol's own terms
// (an nfsstat3 name or a Linux errno name), and what it returned, rendered
// so that two servers' answers compare as strings.
type Result struct {
	Status string // "OK", "NFS3ERR_NOENT", "ENOENT"...
	Detail string // read data, readdir names, stat fields...
}

func (r Result) String() string {
	if r.Detail == "" {
		return r.Status
	}
	return r.Status + " " + r.Detail
}

// Node is what a client sees of one name below the base: the tree is
// compared node by node after every step.
type Node struct {
	Type     string // "file", "dir", "symlink", "other"
	Mode     uint32 // permission bits with setuid, setgid and sticky
	Size     uint64
	Nlink    uint32
	UID, GID uint32
	Data     string // a file's contents (sha256), a symlink's target
}

func (n Node) String() string {
	return fmt.Sprintf("%s %04o size=%d nlink=%d uid=%d gid=%d %s", n.Type, n.Mode, n.Size, n.Nlink, n.UID, n.GID, n.Data)
}

// Tree maps a path below the base ("" is the base itself) to its node.
type Tree map[string]Node

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return fmt.Sprintf("len=%d sha=%s", len(b), hex.EncodeToString(s[:6]))
}

// Target is one server through one client, acting below a base directory
// of its own.
type Target interface {
	// Do runs one step and returns its answer; an error is a transport
	// failure (the connection broke), never a status.
	Do(op Op) (Result, error)
	// Snapshot walks the whole tree below the base.
	Snapshot() (Tree, error)
}

// Difference is one way two servers disagreed at one step.
type Difference struct {
	Step   int    // index into the sequence
	Op     Op     // the step
	What   string // "status", "detail" or "tree"
	Semfs  string // semfs's answer
	Peer   string // the peer's answer
	Path   string // the tree path, for What == "tree"
	Fields string // for What == "tree": which fields differ ("mode", "absent"...)
}

func (d Difference) String() string {
	where := ""
	if d.Path != "" || d.What == "tree" {
		where = fmt.Sprintf(" at %q", d.Path)
	}
	return fmt.Sprintf("step %d (%s): %s%s: semfs %s, peer %s", d.Step, d.Op, d.What, where, d.Semfs, d.Peer)
}

// compareTrees returns the paths whose nodes differ, in order, as
// differences; a missing node is "absent".
func compareTrees(step int, op Op, semfs, peer Tree) []Difference {
	paths := map[string]bool{}
	for p := range semfs {
		paths[p] = true
	}
	for p := range peer {
		paths[p] = true
	}
	sorted := make([]string, 0, len(paths))
	for p := range paths {
		sorted = append(sorted, p)
	}
	sort.Strings(sorted)
	var out []Difference
	for _, p := range sorted {
		a, aok := semfs[p]
		b, bok := peer[p]
		if aok && bok && a == b {
			continue
		}
		show := func(n Node, ok bool) string {
			if !ok {
				return "absent"
			}
			return n.String()
		}
		out = append(out, Difference{Step: step, Op: op, What: "tree", Path: p, Semfs: show(a, aok), Peer: show(b, bok),
			Fields: fieldsDiffering(a, aok, b, bok)})
	}
	return out
}

// sortedNames renders a listing independent of the server's order.
func sortedNames(names []string) string {
	s := append([]string(nil), names...)
	sort.Strings(s)
	for i, n := range s {
		s[i] = showName(n)
	}
	return "[" + strings.Join(s, " ") + "]"
}

func fieldsDiffering(a Node, aok bool, b Node, bok bool) string {
	switch {
	case !aok:
		return "absent on semfs"
	case !bok:
		return "absent on the peer"
	}
	var f []string
	add := func(differ bool, name string) {
		if differ {
			f = append(f, name)
		}
	}
	add(a.Type != b.Type, "type")
	add(a.Mode != b.Mode, "mode")
	add(a.Size != b.Size, "size")
	add(a.Nlink != b.Nlink, "nlink")
	add(a.UID != b.UID || a.GID != b.GID, "owner")
	add(a.Data != b.Data, "data")
	return strings.Join(f, ",")
}

// Signature names the first of a step's differences apart from paths,
// sizes and contents: a shrunk sequence must show the same one, and the
// known-failures list names its entries by it.
func Signature(proto string, diffs []Difference) string {
	if len(diffs) == 0 {
		return ""
	}
	d := diffs[0]
	switch d.What {
	case "tree":
		return fmt.Sprintf("%s %s tree %s%s", proto, d.Op.Kind, d.Fields, d.values())
	case "status":
		return fmt.Sprintf("%s %s status: semfs %s, peer %s", proto, d.Op.Kind, firstWord(d.Semfs), firstWord(d.Peer))
	}
	return fmt.Sprintf("%s %s %s", proto, d.Op.Kind, d.What)
}

func firstWord(s string) string {
	if i := strings.IndexByte(s, ' '); i >= 0 {
		return s[:i]
	}
	return s
}

// values renders the differing type, mode, nlink and owner of a tree
// difference (not sizes or contents, which vary from sequence to sequence).
func (d Difference) values() string {
	a, b := strings.Fields(d.Semfs), strings.Fields(d.Peer)
	if len(a) < 6 || len(b) < 6 {
		return ""
	}
	var out []string
	for i, name := range []string{"type", "mode", "", "nlink", "uid", "gid"} {
		if name != "" && a[i] != b[i] {
			out = append(out, fmt.Sprintf("%s→%s", b[i], a[i]))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return " (peer→semfs " + strings.Join(out, " ") + ")"
}
