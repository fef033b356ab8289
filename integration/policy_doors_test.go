package integration_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
	nfsc "github.com/willscott/go-nfs-client/nfs"

	"github.com/semfs/semfs/integration/semfstest"
)

// The --policy file at the file doors (issue 26): NFSv3 through
// go-nfs-client and 9P2000.L through p9's client, with the fast paths on
// and off (each door answers its hot requests in front of its library; the
// checks sit in the core calls both routes make, and this proves it).

// policyDoors is the example plus an app that may read mail/ only.
const policyDoors = `{
  "default": {"read": ["**"], "write": ["**"], "tag": ["**"], "hide": []},
  "apps": {
    "agent":  {"write": ["agent/**", "scratch/**"], "tag": ["own"], "hide": ["secrets/**", "**/*.key"]},
    "viewer": {"write": []},
    "reader": {"read": ["mail/**"]},
    "":       {"write": [], "hide": ["**"]}
  }
}`

// nfsStatus names the NFS status an error of go-nfs-client carries.
func nfsStatus(err error) string {
	switch {
	case err == nil:
		return "NFS3_OK"
	case errors.Is(err, os.ErrNotExist):
		return "NFS3ERR_NOENT"
	case errors.Is(err, os.ErrExist):
		return "NFS3ERR_EXIST"
	case errors.Is(err, os.ErrPermission):
		return "NFS3ERR_PERM"
	}
	for _, s := range []string{"NFS3ERR_ACCES", "NFS3ERR_ROFS", "NFS3ERR_STALE", "NFS3ERR_NOENT", "NFS3ERR_EXIST"} {
		if strings.Contains(err.Error(), s) {
			return s
		}
	}
	return err.Error()
}

// truncateNFS sends SETATTR size 0 without a guard (Target.Setattr sends
// the ctime of a cached lookup as one).
func truncateNFS(v *nfsc.Target, p string) error {
	_, fh, err := v.Lookup(p)
	if err != nil {
		return err
	}
	_, err = v.SetAttr(fh, nfsc.Sattr3{Size: nfsc.SetSize{SetIt: true, Size: 0}})
	return err
}

// makeMany fills dir (host side) with n files, every third one named *.key
// (hidden from agent), and returns the names agent should list, sorted.
func makeMany(t *testing.T, dir string, n int) []string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var visible []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("entry-with-a-longish-name-%05d", i)
		if i%3 == 0 {
			name += ".key"
		} else {
			visible = append(visible, name)
		}
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(visible)
	return visible
}

func TestPolicyDoors(t *testing.T) {
	d, _ := policyFixture(t, policyDoors)
	t.Run("nfs", func(t *testing.T) { policyNFS(t, d) })
	t.Run("9p", func(t *testing.T) { policy9P(t, d) })
}

func policyNFS(t *testing.T, d *semfstest.Daemon) {
	// As uid 0 (a root daemon's kernel checks allow everything): each
	// refusal below is the policy's.
	agent := d.MountNFS(t, "/@agent", 0)
	want := func(what, got, status string) {
		t.Helper()
		if got != status {
			t.Errorf("%s: %s, want %s", what, got, status)
		}
	}
	// Hidden: absent from lookups and listings.
	for _, p := range []string{"secrets", "secrets/s.txt", "notes/id.key", "agent/x.key"} {
		_, _, err := agent.Lookup(p)
		want("LOOKUP "+p, nfsStatus(err), "NFS3ERR_NOENT")
	}
	if got := nfsNames(t, agent, "."); strings.Contains(strings.Join(got, ","), "secrets") {
		t.Errorf("READDIRPLUS / lists %v", got)
	}
	if got := nfsNames(t, agent, "notes"); len(got) != 0 {
		t.Errorf("READDIRPLUS notes lists %v", got)
	}
	// A hidden name is never confirmed by a create or a rename onto it:
	// the existing hidden file and a new hidden name answer alike.
	for _, p := range []string{"notes/id.key", "notes/new.key"} {
		_, err := agent.Create(p, 0o644)
		want("CREATE "+p, nfsStatus(err), "NFS3ERR_ACCES")
		want("RENAME onto "+p, nfsStatus(agent.Rename("agent/mine.txt", p)), "NFS3ERR_ACCES")
		_, err = agent.Mkdir(p, 0o755)
		want("MKDIR "+p, nfsStatus(err), "NFS3ERR_ACCES")
	}
	for _, p := range []string{"secrets/new.txt", "nothere/new.txt"} {
		_, err := agent.Create(p, 0o644)
		want("CREATE "+p+" (a directory above is hidden or missing)", nfsStatus(err), "NFS3ERR_NOENT")
	}
	want("REMOVE of a hidden file", nfsStatus(agent.Remove("notes/id.key")), "NFS3ERR_NOENT")
	if _, err := os.Stat(d.Data + "/notes/id.key"); err != nil {
		t.Errorf("the hidden file: %v", err)
	}
	// A handle learned elsewhere is STALE: the root export acts as the app
	// registered for the caller's uid, so viewer's handle for a file hidden
	// from agent is tried by agent's uid.
	_, fh, err := d.MountNFS(t, "/", uidViewer).Lookup("secrets/s.txt")
	if err != nil {
		t.Fatalf("viewer's LOOKUP: %v", err)
	}
	_, err = d.MountNFS(t, "/", uidAgent).GetAttr(fh)
	want("GETATTR of a handle hidden from the caller", nfsStatus(err), "NFS3ERR_STALE")

	// The unattributed caller hides "**": an empty export, the root itself
	// and .semfs (which filters itself) still there.
	anon := d.MountNFS(t, "/", uidNobody)
	if got := nfsNames(t, anon, "."); len(got) != 0 {
		t.Errorf("the unattributed caller lists %v", got)
	}
	if got := nfsNames(t, anon, ".semfs"); strings.Join(got, ",") != "changes,grep,query,tags" {
		t.Errorf("the unattributed caller's .semfs lists %v", got)
	}

	// A listing of many pages: every visible name once, no hidden one
	// (each page's cookies count what is listed).
	want2 := makeMany(t, filepath.Join(d.Data, "many-nfs"), 3000)
	if got := nfsNames(t, agent, "many-nfs"); !slices.Equal(got, want2) {
		t.Errorf("READDIRPLUS of 3000 entries, 1000 hidden: %d names, want %d", len(got), len(want2))
	}

	// Write rights.
	_, err = agent.Create("agent/new.txt", 0o644)
	want("CREATE inside agent/**", nfsStatus(err), "NFS3_OK")
	_, err = agent.Mkdir("scratch", 0o755)
	want("MKDIR scratch", nfsStatus(err), "NFS3_OK")
	_, err = agent.Create("mail/new.txt", 0o644)
	want("CREATE outside write", nfsStatus(err), "NFS3ERR_ACCES")
	want("REMOVE outside write", nfsStatus(agent.Remove("mail/m.txt")), "NFS3ERR_ACCES")
	want("RENAME from outside write", nfsStatus(agent.Rename("mail/m.txt", "agent/m.txt")), "NFS3ERR_ACCES")
	want("RENAME to outside write", nfsStatus(agent.Rename("agent/new.txt", "mail/new.txt")), "NFS3ERR_ACCES")
	want("SETATTR outside write", nfsStatus(truncateNFS(agent, "mail/m.txt")), "NFS3ERR_ACCES")
	if f, err := agent.OpenFile("mail/m.txt", 0o644); err == nil {
		_, err = f.Write([]byte("overwrite"))
		f.Close()
		want("WRITE outside write", nfsStatus(err), "NFS3ERR_ACCES")
	}
	if b, _ := os.ReadFile(d.Data + "/mail/m.txt"); string(b) != "party\n" {
		t.Errorf("mail/m.txt was changed: %q", b)
	}
	// Read-only (an empty write list): every change is ROFS.
	viewer := d.MountNFS(t, "/@viewer", 0)
	_, err = viewer.Create("v.txt", 0o644)
	want("viewer CREATE", nfsStatus(err), "NFS3ERR_ROFS")
	_, err = viewer.Mkdir("vdir", 0o755)
	want("viewer MKDIR", nfsStatus(err), "NFS3ERR_ROFS")
	want("viewer REMOVE", nfsStatus(viewer.Remove("mail/m.txt")), "NFS3ERR_ROFS")
	want("viewer SETATTR", nfsStatus(truncateNFS(viewer, "mail/m.txt")), "NFS3ERR_ROFS")
	want("viewer RENAME", nfsStatus(viewer.Rename("mail/m.txt", "mail/n.txt")), "NFS3ERR_ROFS")
	if got := nfsRead(t, viewer, "secrets/s.txt"); string(got) != "0000\n" {
		t.Errorf("viewer reads %q", got)
	}
	// Read rights: metadata yes, contents no.
	reader := d.MountNFS(t, "/@reader", 0)
	if _, _, err := reader.Lookup("agent/mine.txt"); err != nil {
		t.Errorf("reader LOOKUP outside read: %v (metadata stays visible)", err)
	}
	if f, err := reader.Open("agent/mine.txt"); err == nil {
		_, err = f.Read(make([]byte, 10))
		f.Close()
		want("reader READ outside read", nfsStatus(err), "NFS3ERR_ACCES")
	}
	_, err = reader.ReadDirPlus("agent")
	want("reader READDIRPLUS outside read", nfsStatus(err), "NFS3ERR_ACCES")
	if got := nfsRead(t, reader, "mail/m.txt"); string(got) != "party\n" {
		t.Errorf("reader reads mail/m.txt: %q", got)
	}
	// ACCESS (answered where the daemon checks its callers: as root, for a
	// uid other than 0) leaves out what the policy forbids, as nfsd leaves
	// out what an export's options forbid.
	if os.Geteuid() == 0 {
		rd := d.MountNFS(t, "/@reader", uidNobody)
		if got, err := rd.Access("agent/mine.txt", 0x3f); err != nil || got&0x01 != 0 {
			t.Errorf("reader ACCESS outside read: %#x %v, want no READ bit", got, err)
		}
		if got, err := rd.Access("mail/m.txt", 0x3f); err != nil || got&0x01 == 0 {
			t.Errorf("reader ACCESS inside read: %#x %v, want the READ bit", got, err)
		}
	}
}

func policy9P(t *testing.T, d *semfstest.Daemon) {
	agent := d.Attach9P(t, "@agent", 0)
	walkErr := func(root p9.File, p string) error {
		_, f, err := root.Walk(strings.Split(p, "/"))
		if err == nil {
			f.Close()
		}
		return err
	}
	want := func(what string, err, errno error) {
		t.Helper()
		if !errors.Is(err, errno) && !(errno == nil && err == nil) {
			t.Errorf("%s: %v, want %v", what, err, errno)
		}
	}
	for _, p := range []string{"secrets", "secrets/s.txt", "notes/id.key"} {
		want("walk "+p, walkErr(agent, p), linux.ENOENT)
	}
	if got := names9P(t, agent); strings.Contains(strings.Join(got, ","), "secrets") {
		t.Errorf("9P readdir / lists %v", got)
	}
	notes := walk9P(t, agent, "notes")
	if got := names9P(t, notes); len(got) != 0 {
		t.Errorf("9P readdir notes lists %v", got)
	}
	for _, name := range []string{"id.key", "new.key"} {
		want("create notes/"+name, tryCreate9P(notes, name, nil), linux.EACCES)
		_, err := notes.Mkdir(name, 0o755, p9.NoUID, p9.NoGID)
		want("mkdir notes/"+name, err, linux.EACCES)
		agentDir := walk9P(t, agent, "agent")
		want("rename onto notes/"+name, agentDir.RenameAt("mine.txt", notes, name), linux.EACCES)
	}
	if got := names9P(t, d.Attach9P(t, "", uidNobody)); len(got) != 0 {
		t.Errorf("the unattributed caller lists %v over 9P", got)
	}
	want2 := makeMany(t, filepath.Join(d.Data, "many-9p"), 3000)
	if got := names9P(t, walk9P(t, agent, "many-9p")); !slices.Equal(sortedCopy(got), want2) || len(got) != len(want2) {
		t.Errorf("9P readdir of 3000 entries, 1000 hidden: %d names, want %d", len(got), len(want2))
	}
	// Write rights.
	mail := walk9P(t, agent, "mail")
	want("create outside write", tryCreate9P(mail, "new.txt", nil), linux.EACCES)
	m := walk9P(t, agent, "mail/m.txt")
	_, _, err := m.Open(p9.WriteOnly)
	want("open for writing outside write", err, linux.EACCES)
	want("unlink outside write", mail.UnlinkAt("m.txt", 0), linux.EACCES)
	want("create inside agent/**", tryCreate9P(walk9P(t, agent, "agent"), "nine.txt", []byte("9")), nil)
	// Read-only.
	viewer := d.Attach9P(t, "@viewer", 0)
	want("viewer create", tryCreate9P(viewer, "v9.txt", nil), linux.EROFS)
	_, err = viewer.Mkdir("v9dir", 0o755, p9.NoUID, p9.NoGID)
	want("viewer mkdir", err, linux.EROFS)
	_, _, err = walk9P(t, viewer, "mail/m.txt").Open(p9.ReadWrite)
	want("viewer open for writing", err, linux.EROFS)
	// Read rights.
	reader := d.Attach9P(t, "@reader", 0)
	mine := walk9P(t, reader, "agent/mine.txt")
	if _, _, _, err := mine.GetAttr(p9.AttrMaskAll); err != nil {
		t.Errorf("reader getattr outside read: %v", err)
	}
	_, _, err = mine.Open(p9.ReadOnly)
	want("reader open outside read", err, linux.EACCES)
	_, _, err = walk9P(t, reader, "agent").Open(p9.ReadOnly)
	if err == nil {
		_, err = walk9P(t, reader, "agent").Readdir(0, 1<<16)
	}
	if err == nil {
		t.Errorf("reader listed agent/, outside read")
	}
	if got := read9P(t, reader, "mail/m.txt"); string(got) != "party\n" {
		t.Errorf("reader reads mail/m.txt: %q", got)
	}
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	slices.Sort(c)
	return c
}
