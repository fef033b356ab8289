package differential

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Kind names one step of a sequence: a file-system call as a client makes it.
type Kind string

const (
	Create     Kind = "create"      // NFS CREATE UNCHECKED / 9P Tlcreate
	CreateExcl Kind = "create-excl" // NFS CREATE GUARDED / 9P Tlcreate with O_EXCL
	Mkdir      Kind = "mkdir"
	Symlink    Kind = "symlink" // Path is the link, Target its contents
	Link       Kind = "link"    // Path2 becomes a new name of Path
	Rename     Kind = "rename"  // Path to Path2
	Remove     Kind = "remove"  // NFS REMOVE / 9P Tunlinkat
	Rmdir      Kind = "rmdir"   // NFS RMDIR / 9P Tunlinkat AT_REMOVEDIR
	Write      Kind = "write"   // Len bytes at Off, made from Fill
	Read       Kind = "read"    // Len bytes at Off
	Truncate   Kind = "truncate"
	Chmod      Kind = "chmod"
	Utimes     Kind = "utimes"  // atime and mtime set to the client's Sec.Nsec
	Readdir    Kind = "readdir" // in rounds of Count bytes
	Stat       Kind = "stat"
	Readlink   Kind = "readlink"
)

// Op is one generated step. Paths are component lists relative to the
// sequence's base directory; a component may be one of the special names
// below, which only ever stand last, so no step reaches above the base.
type Op struct {
	Kind   Kind
	Path   []string
	Path2  []string // rename and link destination
	Target string   // symlink contents
	Mode   uint32   // create, mkdir, chmod
	Off    uint64   // write, read; truncate: the new size
	Len    uint32   // write, read
	Fill   byte     // write: byte i of the data is Fill + 7*i
	Count  uint32   // readdir: the reply size asked for
	Sec    uint32   // utimes
	Nsec   uint32
	As     uint32 // the caller: 0 (root) or User
}

// User is the uid (and gid) of the unprivileged caller a quarter of the
// steps run as: Debian's "daemon", which both servers find in the user
// database (9P's Tattach carries only a uid).
const User = 1

// Special names: the longest valid name, one byte too long, and names no
// server may create.
var (
	nameMax     = strings.Repeat("n", 255)
	nameTooLong = strings.Repeat("L", 256)
)

// showName prints a component so that a sequence reads back unambiguously.
func showName(n string) string {
	switch n {
	case nameMax:
		return "<255 n>"
	case nameTooLong:
		return "<256 L>"
	case "":
		return `""`
	}
	if strings.ContainsAny(n, "/ \x00") {
		return fmt.Sprintf("%q", n)
	}
	return n
}

func showPath(p []string) string {
	s := make([]string, len(p))
	for i, n := range p {
		s[i] = showName(n)
	}
	return strings.Join(s, "/")
}

// Data is what a write step sends.
func (o Op) Data() []byte {
	b := make([]byte, o.Len)
	for i := range b {
		b[i] = o.Fill + byte(7*i)
	}
	return b
}

func (o Op) String() string {
	if o.As != 0 {
		r := o
		r.As = 0
		return fmt.Sprintf("as %d: %s", o.As, r)
	}
	p := showPath(o.Path)
	switch o.Kind {
	case Create, CreateExcl, Mkdir, Chmod:
		return fmt.Sprintf("%s %s %04o", o.Kind, p, o.Mode)
	case Symlink:
		t := fmt.Sprintf("%q", o.Target)
		if len(o.Target) > 32 {
			t = showName(o.Target)
		}
		return fmt.Sprintf("symlink %s -> %s", p, t)
	case Link, Rename:
		return fmt.Sprintf("%s %s %s", o.Kind, p, showPath(o.Path2))
	case Write:
		return fmt.Sprintf("write %s off=%d len=%d fill=%d", p, o.Off, o.Len, o.Fill)
	case Read:
		return fmt.Sprintf("read %s off=%d len=%d", p, o.Off, o.Len)
	case Truncate:
		return fmt.Sprintf("truncate %s %d", p, o.Off)
	case Utimes:
		return fmt.Sprintf("utimes %s %d.%09d", p, o.Sec, o.Nsec)
	case Readdir:
		return fmt.Sprintf("readdir %s count=%d", p, o.Count)
	}
	return fmt.Sprintf("%s %s", o.Kind, p)
}

// Generate returns n steps drawn from seed alone: the same seed gives the
// same sequence on every machine, so a failure's seed replays it. Names come
// from a pool of four at depth one to three, so steps often meet what
// earlier steps made (EEXIST, ENOTEMPTY, ENOTDIR...) and as often miss
// (ENOENT).
func Generate(seed uint64, n int) []Op {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	ops := make([]Op, 0, n)
	for len(ops) < n {
		ops = append(ops, genOp(r))
	}
	return ops
}

type weighted struct {
	k Kind
	w int
}

var kindWeights = []weighted{
	{Mkdir, 12}, {Create, 10}, {CreateExcl, 4}, {Write, 14}, {Read, 6}, {Truncate, 6},
	{Chmod, 5}, {Utimes, 4}, {Rename, 11}, {Link, 5}, {Symlink, 5}, {Remove, 8},
	{Rmdir, 7}, {Readdir, 5}, {Stat, 4}, {Readlink, 2},
}

func pick[T any](r *rand.Rand, v ...T) T { return v[r.IntN(len(v))] }

func genOp(r *rand.Rand) Op {
	total := 0
	for _, w := range kindWeights {
		total += w.w
	}
	x := r.IntN(total)
	var k Kind
	for _, w := range kindWeights {
		if x < w.w {
			k = w.k
			break
		}
		x -= w.w
	}
	o := Op{Kind: k, Path: genPath(r)}
	if r.IntN(4) == 0 {
		o.As = User
	}
	switch k {
	case Create, CreateExcl:
		o.Mode = pick[uint32](r, 0o644, 0o600, 0o755, 0o444, 0o000, 0o4755, 0o666)
	case Mkdir:
		o.Mode = pick[uint32](r, 0o755, 0o700, 0o777, 0o555, 0o1777, 0o2755)
	case Chmod:
		o.Mode = pick[uint32](r, 0o644, 0o600, 0o755, 0o700, 0o444, 0o000, 0o4755, 0o2755, 0o1777, 0o777)
	case Symlink:
		o.Target = pick(r, "a", "b/c", "../a", "/etc/passwd", "", nameMax, "x y")
	case Link, Rename:
		o.Path2 = genPath(r)
	case Write:
		o.Off = pick[uint64](r, 0, 0, 1, 100, 4095, 4096, 8191, 65536)
		o.Len = pick[uint32](r, 0, 1, 7, 512, 4096, 5000, 20000)
		o.Fill = byte(r.IntN(256))
	case Read:
		o.Off = pick[uint64](r, 0, 0, 1, 4096, 5000, 70000)
		o.Len = pick[uint32](r, 0, 1, 100, 4096, 32768)
	case Truncate:
		o.Off = pick[uint64](r, 0, 0, 1, 4096, 5000, 70000)
	case Utimes:
		o.Sec = pick[uint32](r, 0, 1, 1_000_000_000, 1_700_000_000)
		o.Nsec = pick[uint32](r, 0, 123_456_789)
	case Readdir:
		o.Count = pick[uint32](r, 64, 128, 256, 512, 1024, 2048, 4096)
		if r.IntN(2) == 0 {
			o.Path = o.Path[:len(o.Path)-1] // the base or a directory above the name drawn
		}
	}
	return o
}

// genPath draws one to three components from {a, b, c, d}; one in twenty-five
// ends in a special name instead, and only at depth two or more, so "." and
// ".." resolve inside the base.
func genPath(r *rand.Rand) []string {
	depth := 1
	switch x := r.IntN(100); {
	case x >= 85:
		depth = 3
	case x >= 50:
		depth = 2
	}
	p := make([]string, depth)
	for i := range p {
		p[i] = pick(r, "a", "b", "c", "d")
	}
	if depth >= 2 && r.IntN(25) == 0 {
		p[depth-1] = pick(r, nameMax, nameTooLong, ".", "..", "", "s/l")
	} else if depth == 1 && r.IntN(40) == 0 {
		p[0] = pick(r, nameMax, nameTooLong)
	}
	return p
}
