package differential

import (
	"path"
	"slices"
	"strings"
)

// Exception is a difference between semfs and a peer that the test lets
// pass: a semfs bug on the known-failures list while its fix lands. Each
// entry is also written up in the findings (see the package doc).
type Exception struct {
	Proto     string   // "nfs" or "9p"
	Signature string   // Signature() of the difference Repro shows
	Also      []string // other signatures of the same fault
	Finding   string   // what differs and what the peer (and Linux) do
	// Skip names the generated steps that would show it again, left out
	// of sequences so the rest still runs; peer is the peer's tree before
	// the step.
	Skip func(op Op, peer Tree) bool
	// Repro shows the difference; the test fails once it no longer does,
	// so that the entry leaves the list when the fix merges.
	Repro []Op
}

// KnownFailures are semfs bugs found by this test and not fixed yet. The
// lead empties this list as fixes merge; nothing is added to it without a
// finding.
func KnownFailures() []Exception {
	return nil
}

// AcceptedSkips leaves out the steps whose difference is deliberate but
// cannot be rewritten away, because the peer changes its tree where semfs
// refuses (the package doc gives each reason).
func AcceptedSkips(proto string) func(Op, Tree) bool {
	return func(op Op, peer Tree) bool {
		node := peer[pathKey(op.Path)]
		if proto == "nfs" {
			// LINK by a caller who does not own the file: semfs links as the
			// caller, so the host's fs.protected_hardlinks applies (EPERM,
			// as link(2) by that user, and as diod); ganesha links as root.
			return op.Kind == Link && op.As == User && node.UID != User
		}
		switch {
		case (op.Kind == Create || op.Kind == CreateExcl) && node.Type == "symlink":
			// Tlcreate over a symlink: diod follows it (open(2) with O_CREAT
			// does) and creates its target; semfs never follows a symlink
			// (ELOOP), which keeps every path beneath the backing directory.
			return true
		case (op.Kind == Chmod || op.Kind == Truncate || op.Kind == Utimes) && node.Type == "symlink":
			// Tsetattr of a symlink: diod applies chmod and truncate to its
			// target; semfs acts on the link itself or refuses. A kernel
			// client resolves a symlink before chmod or truncate, so it
			// never sends these.
			return true
		case (op.Kind == Read || op.Kind == Write || op.Kind == Readdir) && node.Type == "symlink":
			// Tlopen of a symlink: diod opens its target; semfs refuses
			// (EINVAL). A kernel client follows symlinks itself.
			return true
		case through(op, peer, "symlink"):
			// Twalk through a symlink: diod follows it (a dangling one:
			// ENOENT); semfs never follows a symlink (ENOTDIR: the walk
			// meets a name that is not a directory). A kernel client reads
			// the link and walks its target itself.
			return true
		case slices.ContainsFunc(op.Path, isDot) || slices.ContainsFunc(op.Path2, isDot):
			// "." or ".." in Twalk: p9's server library refuses them on the
			// wire (EINVAL); diod walks them. Linux's VFS resolves both
			// itself and never sends them.
			return true
		case slices.Contains(op.Path, "") || slices.Contains(op.Path2, ""):
			// An empty name in Twalk: diod walks it as the directory itself;
			// semfs refuses it (EINVAL). Linux never sends one.
			return true
		}
		return false
	}
}

// Known returns the entry whose signature sig is, if any.
func Known(proto, sig string) (Exception, bool) {
	for _, k := range KnownFailures() {
		if k.Proto == proto && (k.Signature == sig || slices.Contains(k.Also, sig)) {
			return k, true
		}
	}
	return Exception{}, false
}

// SkipKnown leaves out every step a known failure of proto names, and
// those AcceptedSkips names.
func SkipKnown(proto string) func(Op, Tree) bool {
	skips := []func(Op, Tree) bool{AcceptedSkips(proto)}
	for _, k := range KnownFailures() {
		if k.Proto == proto && k.Skip != nil {
			skips = append(skips, k.Skip)
		}
	}
	return func(op Op, t Tree) bool {
		for _, s := range skips {
			if s(op, t) {
				return true
			}
		}
		return false
	}
}

// Accepted rewrites, on both sides alike, the answers that may lawfully
// differ between semfs and proto's peer (the package doc lists each with
// its reason).
func Accepted(proto string) func(op Op, r *Result, t Tree) {
	return func(op Op, r *Result, t Tree) {
		if proto == "nfs" && op.Kind == Symlink && op.Target == "" && r.Status == "NFS3ERR_NOTDIR" {
			// SYMLINK with an empty target in a "directory" that is a
			// file: semfs refuses the target first (NFS3ERR_INVAL), as
			// Linux's nfsd does (nfsd3_proc_symlink, before the handle is
			// looked at); ganesha the directory (NFS3ERR_NOTDIR).
			r.Status = "NFS3ERR_INVAL"
		}
		if proto == "9p" && op.Kind == Rename && (r.Status == "ENOTDIR" || r.Status == "ENOENT" || r.Status == "EACCES") &&
			(through(op, t, "file") || through(op, t, "symlink")) {
			// Trenameat into a "directory" that is a file, of a name that
			// is missing or that the caller may not reach: semfs ENOTDIR,
			// as rename(2) (both parents are looked up before the source
			// and its permissions); diod ENOENT or EACCES (the source
			// first). Refused either way; t is the tree after the step,
			// which a refusal left as it was.
			r.Status = "refused"
		}
		if proto == "nfs" && op.Kind == Link && r.Status != "OK" && t[pathKey(op.Path)].Type == "dir" {
			// LINK of a directory: semfs answers NFS3ERR_ISDIR, as Linux's
			// nfsd does, or first NFS3ERR_EXIST over an existing name (as
			// link(2)) or NFS3ERR_ACCES for a target directory the caller
			// may not write (as nfsd); ganesha NFS3ERR_BADTYPE. Refused
			// either way; a success would still differ.
			r.Status = "refused"
		}
		if proto == "nfs" && op.Kind == Link && op.As == User && (r.Status == "NFS3ERR_EXIST" || r.Status == "NFS3ERR_ACCES") &&
			t[pathKey(op.Path2)].Type != "" {
			// LINK over an existing name in a directory the caller may not
			// write: semfs links as the caller, so the kernel's order
			// decides (the name first, filename_create before may_create:
			// NFS3ERR_EXIST, as link(2) and diod); nfsd and ganesha check
			// the directory first (NFS3ERR_ACCES). A kernel client looks
			// the name up before it sends LINK and reports EEXIST whichever
			// the server. Refused either way. t is the tree after the step:
			// a refusal left the name in place.
			r.Status = "refused"
		}
		if proto == "nfs" && r.Status != "OK" && (op.Kind == Truncate || op.Kind == Create) && t[pathKey(op.Path)].Type == "symlink" {
			// SETATTR of a size, or an UNCHECKED CREATE, on a symlink: semfs
			// answers NFS3ERR_INVAL (truncate(2) of what is not a regular
			// file; semfs never follows a symlink), ganesha NFS3ERR_ISDIR or
			// NFS3ERR_BADTYPE. A kernel client resolves symlinks itself and
			// sends neither. Refused either way; a success would still differ.
			r.Status = "refused"
		}
		if proto == "nfs" && r.Status != "OK" && (slices.Contains(op.Path, "") || slices.Contains(op.Path2, "")) {
			// An empty name under a name that is not a directory: semfs
			// refuses the name first (NFS3ERR_INVAL), ganesha the directory
			// (NFS3ERR_NOTDIR); LOOKUP of "" answers NOENT, as ganesha does in
			// a directory. Refused either way.
			r.Status = "refused"
		}
		if op.Kind == Utimes && t[pathKey(op.Path)].Type == "symlink" {
			// Times set on a symlink: semfs sets the link's own, as Linux's
			// nfsd does (utimensat with AT_SYMLINK_NOFOLLOW); ganesha
			// answers OK but sets the time of the call instead.
			r.Detail = ""
		}
		if proto == "nfs" && op.Kind == Read && op.Len == 0 {
			// A READ of no bytes: semfs sets eof when offset+count reaches
			// the size, as Linux's nfsd does; ganesha never does for count 0.
			r.Detail = strings.Replace(r.Detail, "eof=1", "eof=0", 1)
		}
		if r.Status != "OK" && (slices.ContainsFunc(op.Path, slashName) || slices.ContainsFunc(op.Path2, slashName)) {
			// A name with a "/" in it: semfs refuses it as a name (EINVAL);
			// the peers look it up and answer NOENT, NOTDIR or ACCES (Linux's
			// nfsd). Refused either way; a success would still differ.
			r.Status, r.Detail = "refused", ""
		}
		if r.Status != "OK" && (slices.Contains(op.Path, nameTooLong) || slices.Contains(op.Path2, nameTooLong)) {
			// A name too long with another error (the source missing, a
			// "directory" that is a file): semfs checks the names first
			// (ENAMETOOLONG, NFS3ERR_NAMETOOLONG), diod, ganesha and
			// rename(2) the source or directory first (ENOENT, NOTDIR).
			// Refused either way.
			r.Status, r.Detail = "refused", ""
		}
		if last, last2 := lastName(op.Path), lastName(op.Path2); (last == "." || last == ".." || last2 == "." || last2 == "..") &&
			r.Status != "OK" && op.Kind != Stat && op.Kind != Read && op.Kind != Write && op.Kind != Readdir && op.Kind != Readlink {
			// "." or ".." as the name a call creates, removes or renames:
			// semfs refuses them as names (EINVAL, server/name.go); the peers
			// refuse with EEXIST, EISDIR, EACCES or ENOTEMPTY depending on
			// the call. Refused either way; a success would still differ.
			r.Status, r.Detail = "refused", ""
		}
		if proto == "nfs" && (op.Kind == Read || op.Kind == Write) && r.Status == "NFS3ERR_ACCES" && t[pathKey(op.Path)].Type == "dir" {
			// READ or WRITE of a directory the caller may not read or
			// write: semfs checks the type first (NFS3ERR_ISDIR), as Linux's
			// nfsd does (fh_verify); ganesha the permission.
			r.Status = "NFS3ERR_ISDIR"
		}
		if (op.Kind == Remove || op.Kind == Rmdir) && op.As == User && slices.Contains([]string{
			"NFS3ERR_ACCES", "NFS3ERR_NOTDIR", "NFS3ERR_ISDIR", "EACCES", "ENOTDIR", "EISDIR"}, r.Status) {
			// Removing the wrong type of file from a directory the caller
			// may not write: semfs checks the permission first (EACCES), as
			// rmdir(2) and unlink(2) (may_delete) and Linux's nfsd do; ganesha
			// and the 9P client's Tremove fallback (for diod) the type.
			r.Status, r.Detail = "refused", ""
		}
		if (op.Kind == Remove || op.Kind == Rmdir) && op.As == User && (r.Status == "NFS3ERR_PERM" || r.Status == "EPERM") && stickyKept(op.Path, t) {
			// Removing the wrong type of file from a sticky directory where
			// the caller owns neither it nor the file: semfs checks the
			// sticky bit first (EPERM), as may_delete and Linux's nfsd do;
			// ganesha and the Tremove fallback the type (above). t is the
			// tree after the step: a refusal left the file in place.
			r.Status, r.Detail = "refused", ""
		}
		if op.Kind == Rename && len(op.Path2) > len(op.Path) && slices.Equal(op.Path2[:len(op.Path)], op.Path) &&
			(r.Status == "NFS3ERR_INVAL" || r.Status == "NFS3ERR_ACCES" || r.Status == "EINVAL" || r.Status == "EACCES") {
			// A directory renamed into itself by a caller who may not search
			// it: semfs checks the target directory's permission first
			// (EACCES, as nfsd and rename(2)), the peers the loop (EINVAL).
			r.Status = "refused"
		}
		if proto == "nfs" && op.Kind == Truncate && r.Status == "NFS3ERR_BADTYPE" {
			// SETATTR of a size on a directory: semfs answers NFS3ERR_ISDIR,
			// as Linux's nfsd does, ganesha NFS3ERR_BADTYPE.
			r.Status = "NFS3ERR_ISDIR"
		}
		if op.Kind == Chmod && t[pathKey(op.Path)].Type == "symlink" {
			// chmod of a symlink: semfs never acts on a symlink's target
			// and Linux has no lchmod, so it answers NFS3ERR_NOTSUPP /
			// EOPNOTSUPP; the peers answer OK and change nothing (or
			// NFS3ERR_PERM to a caller who does not own the link).
			r.Status = map[string]string{"nfs": "NFS3ERR_NOTSUPP", "9p": "EOPNOTSUPP"}[proto]
		}
		if proto == "nfs" && op.Kind == Readdir && (r.Status == "NFS3ERR_TOOSMALL" || r.Status == "OK") && nfsTooSmall(op, t) {
			// READDIR at a count too small for the next entry: semfs answers
			// NFS3ERR_TOOSMALL, as nfsd does; ganesha answers OK and ends the
			// listing there (losing the rest), or a page with no entry and no
			// end, which a client asks again forever (the driver reads that
			// as TOOSMALL). Refused either way.
			r.Status, r.Detail = "refused", ""
		}
		if proto == "9p" && op.Kind == Readdir && (r.Status == "EINVAL" || r.Status == "OK") && tooBig(op, t) {
			// Treaddir at a count too small for an entry: semfs answers
			// EINVAL when it reaches it, as getdents(2) does, and a larger
			// count from the same offset gets it (ninep); diod ends the
			// listing there, losing the rest. Refused either way.
			r.Status, r.Detail = "refused", ""
		}
		if proto == "nfs" && (op.Kind == Create || op.Kind == CreateExcl) && r.Status == "NFS3ERR_ISDIR" {
			// UNCHECKED CREATE over a directory: Linux's nfsd answers
			// NFS3ERR_EXIST (semfs too), ganesha NFS3ERR_ISDIR.
			r.Status = "NFS3ERR_EXIST"
		}
	}
}

// pathKey is a path's key in a Tree.
// pathKey is the tree's key of p: its names joined and cleaned, "" for the
// base (which "a/.." also names).
func pathKey(p []string) string {
	if k := path.Join(p...); k != "." {
		return k
	}
	return ""
}

// stickyKept reports whether the file at p is in a sticky directory and
// neither it nor the directory is User's: a file only its owner, the
// directory's owner or root may remove (sticky(7)).
func stickyKept(p []string, t Tree) bool {
	if len(p) == 0 {
		return false
	}
	dir, ok := t[pathKey(p[:len(p)-1])]
	node, found := t[pathKey(p)]
	return ok && found && dir.Mode&0o1000 != 0 && dir.UID != User && node.UID != User
}

func isDot(n string) bool { return n == "." || n == ".." }

func slashName(n string) bool { return strings.Contains(n, "/") }

func lastName(p []string) string {
	if len(p) == 0 {
		return ""
	}
	return p[len(p)-1]
}

// through says whether one of a step's paths goes through a name t shows
// is of type typ ("file", "symlink"): a name that is not its last.
func through(op Op, t Tree, typ string) bool {
	for _, p := range [][]string{op.Path, op.Path2} {
		for i := 1; i < len(p); i++ {
			if n, ok := t[pathKey(p[:i])]; ok && n.Type == typ {
				return true
			}
		}
	}
	return false
}

// tooBig says whether a 9P readdir step's directory in t holds a name whose
// dirent (24 bytes and the name) does not fit in the step's count.
func tooBig(op Op, t Tree) bool {
	dir := pathKey(op.Path)
	for k := range t {
		parent := path.Dir(k)
		if parent == "." {
			parent = ""
		}
		if k != "" && parent == dir && 24+len(path.Base(k)) > int(op.Count) {
			return true
		}
	}
	return false
}

// nfsTooSmall says whether a READDIR step's count is too small for a reply
// holding "." and "..", or for one holding any one entry of its directory
// in t, by the sizes semfs counts (nfs/readdir.go: 104 bytes of reply, 24
// bytes an entry and its padded name).
func nfsTooSmall(op Op, t Tree) bool {
	if op.Count < 104+28+28 {
		return true
	}
	dir := pathKey(op.Path)
	for k := range t {
		parent := path.Dir(k)
		if parent == "." {
			parent = ""
		}
		if k != "" && parent == dir && 104+24+(len(path.Base(k))+3)&^3 > int(op.Count) {
			return true
		}
	}
	return false
}
