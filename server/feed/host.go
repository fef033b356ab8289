package feed

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/semfs/semfs/server"
)

// DirsFileName is the directory list's name in the index directory
// (HostDirs.Save).
const DirsFileName = "changes.dirs"

// HostDirs is the daemon's list of the backing directory's directories, each
// with its identity (inode; 0 when unknown), kept so that host changes to
// directories become events: the index holds records of files only, so a
// directory made, removed or moved by a host process is known only by what
// was there before. It is kept in step with the core's change stream (Apply)
// and with each look at the backing directory (Events); the daemon saves it
// beside the log at a clean stop, so that the start-up reconcile can tell
// what host processes did to directories while it was down. Safe for
// concurrent use.
type HostDirs struct {
	mu   sync.Mutex
	dirs map[string]uint64
	// modes are the directories' permission bits where known (a missing
	// one, or 0: unknown), so that a host's chmod of one is a setattr.
	modes map[string]uint32
	// known is false until a full list is in (Load, or Events of the whole
	// tree): until then a look cannot tell a new directory from an old one,
	// and makes no directory events.
	known bool
}

// NewHostDirs is an empty list, not yet known.
func NewHostDirs() *HostDirs { return &HostDirs{dirs: map[string]uint64{}, modes: map[string]uint32{}} }

// Apply keeps the list in step with one change of the core's stream. ino is
// the identity of a directory made, where the caller knows it (0 otherwise:
// a host move of that directory then reads as a remove and a mkdir).
func (h *HostDirs) Apply(c server.Change, ino uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch c.Op {
	case server.ChangeMkdir:
		h.dirs[c.Path] = ino
		h.modes[c.Path] = c.Mode
	case server.ChangeSetMode:
		if h.has(c.Path) {
			h.modes[c.Path] = c.Mode
		}
	case server.ChangeRemove:
		if c.IsDir {
			delete(h.dirs, c.Path)
			delete(h.modes, c.Path)
		}
	case server.ChangeRename:
		if c.IsDir || h.has(c.Path) {
			h.moveLocked(c.Path, c.NewPath)
		} else {
			h.dropLocked(c.NewPath) // a file over an empty directory
		}
	}
}

func (h *HostDirs) has(p string) bool { _, ok := h.dirs[p]; return ok }

// moveLocked moves from and everything below it to to. Precondition: h.mu held.
func (h *HostDirs) moveLocked(from, to string) {
	h.dropLocked(to)
	for p, ino := range h.dirs {
		if server.Within(p, from) {
			delete(h.dirs, p)
			h.dirs[to+p[len(from):]] = ino
		}
	}
	for p, m := range h.modes {
		if server.Within(p, from) {
			delete(h.modes, p)
			h.modes[to+p[len(from):]] = m
		}
	}
}

// dropLocked forgets p and everything below it. Precondition: h.mu held.
func (h *HostDirs) dropLocked(p string) {
	for q := range h.dirs {
		if server.Within(q, p) {
			delete(h.dirs, q)
			delete(h.modes, q)
		}
	}
}

// Attrib is the event of a host's chmod of directory p, outside the scopes
// of a look (a watcher batch where only p's attributes changed), now of
// identity ino and permission bits mode; false when p's mode is as the list
// knows it, or p is not known as that directory (a look of its parent
// tells what became of it). The list takes mode either way.
func (h *HostDirs) Attrib(p string, ino uint64, mode uint32, at time.Time) (Event, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	old, ok := h.dirs[p]
	if !ok || !h.known || old != ino && old != 0 && ino != 0 {
		return Event{}, false
	}
	was := h.modes[p]
	h.modes[p] = mode
	if was == 0 || mode == 0 || was == mode {
		return Event{}, false
	}
	return Event{Op: OpSetattr, Path: p, Type: server.TypeDir, App: AppHost, At: at}, true
}

// HostFile is one file of a HostLook.
type HostFile struct {
	Path  string
	Type  string // server.TypeFile or server.TypeSymlink
	Size  int64
	Link  bool // a new name of a file that had one already (a hard link)
	Trunc bool // smaller than before: a truncate
}

// Move is a path that moved.
type Move struct{ From, To string }

// HostLook is what one look at the backing directory found inside its
// scopes (a watcher batch; the start-up reconcile, whose scope is the whole
// tree): the directories there now, and what the index made of the files.
type HostLook struct {
	Scopes  []string          // each a path standing for itself and what is below it; "" the whole tree
	Dirs    map[string]uint64 // every directory at or below a scope now, with its identity
	Modes   map[string]uint32 // their permission bits (a missing one: unknown)
	Created []HostFile        // files with no record before
	Renamed []Move            // files whose record followed their inode
	Over    []Move            // files moved over another, which took its place
	Removed []string          // files gone (including those of Over)
	Updated []HostFile        // files written (or truncated)
	Chmod   []HostFile        // files whose permission bits changed
	At      time.Time
}

// Events brings the list in line with look and returns look's events, app
// AppHost, in an order that could have happened: directories made (parents
// first), moves (a directory moved is one event, not one per file below
// it), files made, written, their modes changed (or touched), directories'
// modes changed, then files and directories removed (children first). The kernel's own order is lost in a batch; this one replays to
// the same tree.
func (h *HostDirs) Events(look HostLook) []Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	whole := slices.Contains(look.Scopes, "")
	in := func(p string) bool {
		return whole || slices.ContainsFunc(look.Scopes, func(s string) bool { return server.Within(p, s) })
	}
	before := map[string]uint64{}
	beforeModes := map[string]uint32{}
	for p, ino := range h.dirs {
		if in(p) {
			before[p] = ino
			beforeModes[p] = h.modes[p]
		}
	}
	known := h.known
	for p := range before {
		delete(h.dirs, p)
		delete(h.modes, p)
	}
	for p, ino := range look.Dirs {
		if in(p) {
			h.dirs[p] = ino
			if m := look.Modes[p]; m != 0 {
				h.modes[p] = m
			}
		}
	}
	if whole {
		h.known = true
	}
	ev := func(op, p, from, typ string, size int64) Event {
		return Event{Op: op, Path: p, From: from, Type: typ, App: AppHost, Size: size, At: look.At}
	}
	var gone, made []string
	if known {
		for p, ino := range before {
			if now, ok := look.Dirs[p]; !ok || now != ino && now != 0 && ino != 0 {
				gone = append(gone, p)
			}
		}
		for p, ino := range look.Dirs {
			if old, ok := before[p]; in(p) && !ok || old != ino && old != 0 && ino != 0 {
				made = append(made, p)
			}
		}
	}
	slices.Sort(gone)
	slices.Sort(made)
	// Directories moved: gone at one path, made at another, same identity.
	// One moved with its parent is implied by the parent's move.
	byIno := map[uint64]string{}
	for _, p := range made {
		if ino := look.Dirs[p]; ino != 0 {
			byIno[ino] = p
		}
	}
	var moves []Move
	moved := map[string]bool{} // made or gone paths a move explains
	implied := func(from, to string) bool {
		for _, m := range moves {
			if server.Within(from, m.From) && server.Within(to, m.To) && from[len(m.From):] == to[len(m.To):] {
				return true
			}
		}
		return false
	}
	for _, p := range gone {
		to, ok := byIno[before[p]]
		if before[p] == 0 || !ok || moved[to] {
			continue
		}
		moved[p], moved[to] = true, true
		if !implied(p, to) {
			moves = append(moves, Move{From: p, To: to})
		}
	}
	var out []Event
	for _, p := range made {
		if !moved[p] {
			out = append(out, ev(OpMkdir, p, "", server.TypeDir, 0))
		}
	}
	for _, m := range moves {
		out = append(out, ev(OpRename, m.To, m.From, server.TypeDir, 0))
	}
	for _, m := range look.Renamed {
		if !implied(m.From, m.To) {
			out = append(out, ev(OpRename, m.To, m.From, server.TypeFile, 0))
		}
	}
	over := map[string]bool{}
	for _, m := range look.Over {
		over[m.From], over[m.To] = true, true
		out = append(out, ev(OpRename, m.To, m.From, server.TypeFile, 0))
	}
	for _, f := range look.Created {
		op := OpCreate
		switch {
		case f.Type == server.TypeSymlink:
			op = OpSymlink
		case f.Link:
			op = OpLink
		}
		out = append(out, ev(op, f.Path, "", f.Type, f.Size))
	}
	for _, f := range look.Updated {
		if over[f.Path] {
			continue // the file moved there: the rename says so
		}
		op := OpWrite
		if f.Trunc {
			op = OpTruncate
		}
		out = append(out, ev(op, f.Path, "", f.Type, f.Size))
	}
	for _, f := range look.Chmod {
		out = append(out, ev(OpSetattr, f.Path, "", f.Type, f.Size))
	}
	// Directories chmodded: the same directory (not made, moved or gone)
	// with other permission bits.
	if known {
		var chmod []string
		for p, ino := range look.Dirs {
			old, ok := before[p]
			was, now := beforeModes[p], look.Modes[p]
			if in(p) && ok && (old == ino || old == 0 || ino == 0) && was != 0 && now != 0 && was != now {
				chmod = append(chmod, p)
			}
		}
		slices.Sort(chmod)
		for _, p := range chmod {
			out = append(out, ev(OpSetattr, p, "", server.TypeDir, 0))
		}
	}
	// Removes, children first: a file, then its directories, deepest first.
	var rm []Event
	for _, p := range look.Removed {
		if !over[p] {
			rm = append(rm, ev(OpRemove, p, "", "", 0))
		}
	}
	for _, p := range gone {
		if !moved[p] {
			rm = append(rm, ev(OpRemove, p, "", server.TypeDir, 0))
		}
	}
	slices.SortStableFunc(rm, func(a, b Event) int { return strings.Compare(b.Path, a.Path) })
	// A directory removed and another made at its path: the removal (and
	// those below it) before everything else, so that the events replay.
	var again []string
	for _, p := range made {
		if _, ok := before[p]; ok && !moved[p] {
			again = append(again, p)
		}
	}
	if len(again) == 0 {
		return append(out, rm...)
	}
	under := func(e Event) bool {
		return slices.ContainsFunc(again, func(d string) bool { return server.Within(e.Path, d) })
	}
	first := slices.DeleteFunc(slices.Clone(rm), func(e Event) bool { return !under(e) })
	rm = slices.DeleteFunc(rm, under)
	return append(append(first, out...), rm...)
}

// Save writes the list to path (at a clean stop, before the log is closed).
func (h *HostDirs) Save(path string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("directory list %s: %w", path, err)
	}
	w := bufio.NewWriter(f)
	for p, ino := range h.dirs {
		// A path holds no newline (the core refuses none, but the list
		// must not be misread if one ever did): quoted. The mode is
		// octal, after the identity (a list of an older semfs has none).
		fmt.Fprintf(w, "%d %o %s\n", ino, h.modes[p], strconv.Quote(p))
	}
	err = w.Flush()
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("directory list %s: %w", path, err)
	}
	return nil
}

// Load reads a list Save wrote, and removes the file: a list is good for
// the start right after the stop that saved it only (a later crash must
// not find it). A missing or unreadable list leaves h unknown.
func (h *HostDirs) Load(path string) error {
	b, err := os.ReadFile(path)
	os.Remove(path)
	if err != nil {
		return err
	}
	dirs := map[string]uint64{}
	modes := map[string]uint32{}
	for _, l := range strings.Split(string(b), "\n") {
		if l == "" {
			continue
		}
		n, q, ok := strings.Cut(l, " ")
		ino, err1 := strconv.ParseUint(n, 10, 64)
		var mode uint64
		var err3 error
		if m, rest, cut := strings.Cut(q, " "); cut && !strings.HasPrefix(q, `"`) {
			mode, err3 = strconv.ParseUint(m, 8, 32)
			q = rest
		}
		p, err2 := strconv.Unquote(q)
		if !ok || err1 != nil || err2 != nil || err3 != nil {
			return fmt.Errorf("directory list %s: a damaged line %q", path, l)
		}
		dirs[p] = ino
		if mode != 0 {
			modes[p] = uint32(mode)
		}
	}
	h.mu.Lock()
	h.dirs, h.modes, h.known = dirs, modes, true
	h.mu.Unlock()
	return nil
}

// DirsPathIn is the directory list's path in index directory dir.
func DirsPathIn(dir string) string { return filepath.Join(dir, DirsFileName) }
