package integration_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
	nfsc "github.com/willscott/go-nfs-client/nfs"

	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/integration/semfstest"
)

// The .semfs namespace (issue 13) through the real daemon and real clients:
// go-nfs-client and libnfs over NFSv3, p9's client and raw 9P messages.

// metaFixture starts a keyword-only daemon (a deterministic ranking) holding
// three files created as @notes, two of them tagged about auth problems.
func metaFixture(t *testing.T, args ...string) *semfstest.Daemon {
	t.Helper()
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off", Args: args})
	root := d.Attach9P(t, "@notes", 0)
	if _, err := root.Mkdir("logs", 0o755, p9.NoUID, p9.NoGID); err != nil {
		t.Fatal(err)
	}
	_, logs, err := root.Walk([]string{"logs"})
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	create9P(t, logs, "login-failure.md", []byte("ERROR: login failed for alice\n"))
	create9P(t, root, "token-expiry.md", []byte("tokens expire after an hour\n"))
	create9P(t, root, "groceries.txt", []byte("milk\n"))
	ctx := d.Context()
	for _, tg := range []client.TagRequest{
		{Path: "logs/login-failure.md", Task: "auth problems: login failure auth auth"},
		{Path: "token-expiry.md", Task: "auth token expiry", RelatedApps: []string{"browser"}},
	} {
		if _, err := d.Client.Tag(ctx, tg); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// apiOrder is the socket's answer to text: the paths, best first.
func apiOrder(t *testing.T, d *semfstest.Daemon, text string, limit int) []string {
	t.Helper()
	res, err := d.Client.Query(d.Context(), client.QueryRequest{Text: text, Limit: limit})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range res {
		out = append(out, r.Path)
	}
	return out
}

// wantLinks is what a query directory lists for the paths, in rank order.
func wantLinks(paths []string) []string {
	out := []string{".results.json"}
	for i, p := range paths {
		out = append(out, fmt.Sprintf("%02d-%s", i+1, filepath.Base(p)))
	}
	return out
}

// nfsNames lists dir over NFS, sorted by name (go-nfs-client keeps a
// listing in a map; the rank prefixes make name order rank order, which is
// what ls shows).
func nfsNames(t *testing.T, v *nfsc.Target, dir string) []string {
	t.Helper()
	ents, err := v.ReadDirPlus(dir)
	if err != nil {
		t.Fatalf("NFS READDIRPLUS %s: %v", dir, err)
	}
	var out []string
	for _, e := range ents {
		if e.FileName != "." && e.FileName != ".." {
			out = append(out, e.FileName)
		}
	}
	slices.Sort(out)
	return out
}

func nfsRead(t *testing.T, v *nfsc.Target, p string) []byte {
	t.Helper()
	f, err := v.Open(p)
	if err != nil {
		t.Fatalf("NFS open %s: %v", p, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatalf("NFS read %s: %v", p, err)
	}
	return b
}

func walk9P(t *testing.T, from p9.File, p string) p9.File {
	t.Helper()
	_, f, err := from.Walk(strings.Split(p, "/"))
	if err != nil {
		t.Fatalf("9P walk %s: %v", p, err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func names9P(t *testing.T, dir p9.File) []string {
	t.Helper()
	_, d, err := dir.Walk(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, _, err := d.Open(p9.ReadOnly); err != nil {
		t.Fatalf("9P open dir: %v", err)
	}
	var out []string
	var off uint64
	for {
		ents, err := d.Readdir(off, 1<<16)
		if err != nil {
			t.Fatalf("9P readdir: %v", err)
		}
		if len(ents) == 0 {
			return out
		}
		for _, e := range ents {
			if e.Name != "." && e.Name != ".." {
				out = append(out, e.Name)
			}
			off = e.Offset
		}
	}
}

func read9P(t *testing.T, from p9.File, p string) []byte {
	t.Helper()
	f := walk9P(t, from, p)
	if _, _, err := f.Open(p9.ReadOnly); err != nil {
		t.Fatalf("9P open %s: %v", p, err)
	}
	var out []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := f.ReadAt(buf, int64(len(out)))
		out = append(out, buf[:n]...)
		if err == io.EOF || (err == nil && n == 0) {
			return out
		}
		if err != nil {
			t.Fatalf("9P read %s: %v", p, err)
		}
	}
}

func TestMetaQueryDirectoryThroughNFSAnd9P(t *testing.T) {
	d := metaFixture(t)
	paths := apiOrder(t, d, "auth problems", 50)
	if len(paths) != 2 {
		t.Fatalf("the API found %v, want the two auth files", paths)
	}
	want := wantLinks(paths)
	qdir := ".semfs/query/auth problems"

	v := d.MountNFS(t, "/@notes", 0)
	if got := nfsNames(t, v, qdir); !equal(got, want) {
		t.Errorf("NFS listing of %s: %q, want %q", qdir, got, want)
	}
	root9 := d.Attach9P(t, "/", 0)
	if got := names9P(t, walk9P(t, root9, qdir)); !equal(got, want) {
		t.Errorf("9P listing of %s: %q, want %q", qdir, got, want)
	}

	// The symlink's target is relative, back to the export's root.
	link := walk9P(t, root9, qdir+"/"+want[1])
	target, err := link.Readlink()
	if err != nil || target != "../../../"+paths[0] {
		t.Fatalf("9P readlink %s: %q %v", want[1], target, err)
	}
	if fi, _, err := v.Lookup(qdir + "/" + want[1]); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("NFS lookup of a result: %v %v", fi, err)
	}
	// Following it as a kernel does (dir of the link, then the target).
	resolved := filepath.Join(qdir, target)
	if got := nfsRead(t, v, resolved); !bytes.Equal(got, mustRead(t, filepath.Join(d.Data, paths[0]))) {
		t.Fatalf("NFS read through the result link %s: %q", resolved, got)
	}

	// .results.json is the API's answer, through both doors.
	for door, b := range map[string][]byte{"NFS": nfsRead(t, v, qdir+"/.results.json"), "9P": read9P(t, root9, qdir+"/.results.json")} {
		var r client.QueryResponse
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s .results.json: %v\n%s", door, err, b)
		}
		var got []string
		for _, x := range r.Results {
			got = append(got, x.Path)
		}
		if !equal(got, paths) {
			t.Errorf("%s .results.json paths %q, want %q", door, got, paths)
		}
	}

	// @N limits; the README is listed at query/.
	if got := nfsNames(t, v, ".semfs/query/auth problems@1"); !equal(got, wantLinks(paths[:1])) {
		t.Errorf("@1 lists %q", got)
	}
	if got := nfsNames(t, v, ".semfs/query"); !equal(got, []string{"README"}) {
		t.Errorf(".semfs/query lists %q", got)
	}
	if b := nfsRead(t, v, ".semfs/query/README"); !bytes.Contains(b, []byte("NN-")) {
		t.Errorf("README: %q", b)
	}

	// Hidden from the root's listing, reachable by name, never in a query's
	// results or the index.
	for _, n := range nfsNames(t, v, "/") {
		if n == ".semfs" {
			t.Errorf("the NFS root lists .semfs")
		}
	}
	for _, n := range names9P(t, root9) {
		if n == ".semfs" {
			t.Errorf("the 9P root lists .semfs")
		}
	}
	if got := nfsNames(t, v, ".semfs"); !equal(got, []string{"changes", "grep", "query", "tags"}) {
		t.Errorf(".semfs lists %q", got)
	}
	for _, q := range []string{"query", "README", "semfs", "results"} {
		for _, p := range apiOrder(t, d, q, 0) {
			if strings.HasPrefix(p, ".semfs") {
				t.Errorf("query %q returned %s", q, p)
			}
		}
	}
	if _, err := os.Lstat(filepath.Join(d.Data, ".semfs")); !os.IsNotExist(err) {
		t.Errorf("a .semfs entry appeared in the backing directory: %v", err)
	}
}

func TestMetaThroughLibnfs(t *testing.T) {
	for _, b := range []string{"nfs-ls", "nfs-cat"} {
		if _, err := exec.LookPath(b); err != nil {
			if os.Getenv("SEMFS_REQUIRE_TOOLS") == "1" {
				t.Fatalf("%s not found and SEMFS_REQUIRE_TOOLS=1 (apt-get install libnfs-utils)", b)
			}
			t.Skipf("%s not found: install Debian's libnfs-utils to run this test", b)
		}
	}
	d := metaFixture(t, "--list-meta-dir")
	_, port, _ := net.SplitHostPort(d.NFS)
	url := func(p string) string {
		return fmt.Sprintf("nfs://127.0.0.1/@notes/%s?nfsport=%s&mountport=%s&version=3", p, port, port)
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// libnfs mounts the directory its URL names (nfs-cat its parent): the
	// daemon answers MOUNT of a subdirectory, query directories included,
	// before anything has looked up the directories above it. The query's
	// space is written as one: libnfs does not decode %20.
	if got := run("nfs-ls", url("logs")); !strings.Contains(got, "login-failure.md") {
		t.Fatalf("nfs-ls of a subdirectory on a fresh mount: %s", got)
	}
	q := run("nfs-ls", url(".semfs/query/auth problems"))
	i1, i2 := strings.Index(q, "01-login-failure.md"), strings.Index(q, "02-token-expiry.md")
	if i1 < 0 || i2 < 0 || !strings.Contains(q, ".results.json") {
		t.Fatalf("nfs-ls of a query directory:\n%s", q)
	}
	// A whole export, walked: the namespace shows when listed.
	ls := run("nfs-ls", "-R", url(""))
	for _, want := range []string{".semfs/query/README", ".semfs/tags/logs/login-failure.md", ".semfs/tags/token-expiry.md"} {
		if !strings.Contains(ls, want) {
			t.Errorf("nfs-ls -R does not list %s:\n%s", want, ls)
		}
	}
	if strings.Contains(ls, ".semfs/tags/.semfs") {
		t.Errorf("the tags tree holds the namespace itself:\n%s", ls)
	}
	if got := run("nfs-cat", url(".semfs/query/auth problems/.results.json")); !strings.Contains(got, `"path":"logs/login-failure.md"`) && !strings.Contains(got, `"path": "logs/login-failure.md"`) {
		t.Errorf("nfs-cat .results.json: %s", got)
	}
	// (A result link itself is not for libnfs: it refuses a link that
	// climbs above the directory it mounted, "../../../logs/...". Kernel
	// clients, the go-nfs client and 9P follow it; see the tests above.)
	if got := run("nfs-cat", url(".semfs/tags/logs/login-failure.md")); !strings.Contains(got, "auth problems: login failure auth auth") {
		t.Errorf("nfs-cat of a tags file: %s", got)
	}
	if got := run("nfs-cat", url("logs/login-failure.md")); got != "ERROR: login failed for alice\n" {
		t.Errorf("nfs-cat through a subdirectory mount: %q", got)
	}
	// What a subdirectory MOUNT refuses: a missing directory, a file, a path
	// out of the tree.
	for _, p := range []string{"no/such/dir/f", "token-expiry.md/f", "../etc/passwd"} {
		if out, err := exec.Command("nfs-cat", url(p)).CombinedOutput(); err == nil {
			t.Errorf("nfs-cat %s: read %q through a mount that must be refused", p, out)
		}
	}
}

// tagsOf reads a file's record through the socket.
func tagsOf(t *testing.T, d *semfstest.Daemon, p string) client.Record {
	t.Helper()
	rec, err := d.Client.File(d.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// nfsWriteWhole writes b to p as `echo > p` does over NFS: truncate, write.
func nfsWriteWhole(v *nfsc.Target, p string, b []byte) error {
	if err := v.Setattr(p, nfsc.Sattr3{Size: nfsc.SetSize{SetIt: true, Size: 0}}); err != nil {
		return fmt.Errorf("truncate: %w", err)
	}
	f, err := v.OpenFile(p, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write(b)
	return err
}

// write9PWhole writes b to p over 9P as `echo > p` does: open with O_TRUNC,
// one Twrite, clunk (whose error is returned).
func write9PWhole(root p9.File, p string, b []byte) error {
	_, f, err := root.Walk(strings.Split(p, "/"))
	if err != nil {
		return err
	}
	if _, _, err := f.Open(p9.WriteOnly | p9.OpenFlags(0o1000)); err != nil {
		f.Close()
		return fmt.Errorf("open: %w", err)
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		f.Close()
		return fmt.Errorf("write: %w", err)
	}
	return f.Close()
}

func TestMetaTagsFilesThroughNFSAnd9P(t *testing.T) {
	d := metaFixture(t)
	v := d.MountNFS(t, "/@notes", 0)
	root9 := d.Attach9P(t, "@notes", 0)

	// Reading: the record as the API shows it, through both doors.
	var rec client.Record
	if err := json.Unmarshal(nfsRead(t, v, ".semfs/tags/token-expiry.md"), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Path != "token-expiry.md" || rec.CreatedBy != "notes" || rec.Task != "auth token expiry" || !equal(rec.RelatedApps, []string{"browser"}) {
		t.Fatalf("tags file over NFS: %+v", rec)
	}
	if b := read9P(t, root9, ".semfs/tags/logs/login-failure.md"); !bytes.Contains(b, []byte(`"createdBy": "notes"`)) {
		t.Fatalf("tags file over 9P: %s", b)
	}
	if got := nfsNames(t, v, ".semfs/tags/logs"); !equal(got, []string{"login-failure.md"}) {
		t.Errorf(".semfs/tags/logs lists %q", got)
	}
	if got := nfsNames(t, v, ".semfs/tags"); !equal(got, []string{"groceries.txt", "logs", "token-expiry.md"}) {
		t.Errorf(".semfs/tags lists %q", got)
	}

	// Writing over NFS retags, and a query through 9P sees it at once.
	if err := nfsWriteWhole(v, ".semfs/tags/groceries.txt", []byte(`{"task":"weekly shopping list","relatedApps":["fridge"]}`+"\n")); err != nil {
		t.Fatalf("NFS tags write: %v", err)
	}
	if r := tagsOf(t, d, "groceries.txt"); r.Task != "weekly shopping list" || !equal(r.RelatedApps, []string{"fridge"}) {
		t.Fatalf("after the NFS tags write: %+v", r)
	}
	if got := names9P(t, walk9P(t, root9, ".semfs/query/shopping")); !equal(got, wantLinks([]string{"groceries.txt"})) {
		t.Errorf("9P query after the NFS retag: %q", got)
	}
	// Durable as POST /v1/tag is: the file's own record carries the tags.
	if b, err := getxattr(filepath.Join(d.Data, "groceries.txt"), "user.semfs"); err == nil && !bytes.Contains(b, []byte("weekly shopping list")) {
		t.Errorf("the durable record in user.semfs lacks the tag: %s", b)
	}

	// Writing over 9P; a record read, edited and written back is taken.
	edited := bytes.Replace(read9P(t, root9, ".semfs/tags/token-expiry.md"), []byte("auth token expiry"), []byte("session cookies"), 1)
	if err := write9PWhole(root9, ".semfs/tags/token-expiry.md", edited); err != nil {
		t.Fatalf("9P write-back of an edited record: %v", err)
	}
	if r := tagsOf(t, d, "token-expiry.md"); r.Task != "session cookies" || !equal(r.RelatedApps, []string{"browser"}) {
		t.Fatalf("after the 9P write-back: %+v", r)
	}
	if got := nfsNames(t, v, ".semfs/query/cookies"); !equal(got, wantLinks([]string{"token-expiry.md"})) {
		t.Errorf("NFS query after the 9P retag: %q", got)
	}

	// Bad writes fail and change nothing.
	before := tagsOf(t, d, "groceries.txt")
	for _, bad := range []string{
		`{"task": "x", "colour": "blue"}`,          // unknown field
		`{"task": 7}`,                              // wrong type
		`{"task": "x"} {"task": "y"}`,              // trailing data
		`{"task": "x", "relatedApps": [""]}`,       // an empty related app
		`{"task": "x", "path": "token-expiry.md"}`, // another file's record
		`{"task": "x", "createdBy": "mallory"}`,    // the creator is not the writer's to say
		`[1, 2]`,
		`task=x`,
	} {
		if err := nfsWriteWhole(v, ".semfs/tags/groceries.txt", []byte(bad)); err == nil {
			t.Errorf("NFS write of %s succeeded", bad)
		}
		if err := write9PWhole(root9, ".semfs/tags/groceries.txt", []byte(bad)); err == nil {
			t.Errorf("9P write of %s succeeded", bad)
		}
		if r := tagsOf(t, d, "groceries.txt"); r.Task != before.Task || !equal(r.RelatedApps, before.RelatedApps) {
			t.Fatalf("%s changed the tags: %+v", bad, r)
		}
	}
	// An unfinished object fails at close (9P's clunk) and changes nothing.
	if err := write9PWhole(root9, ".semfs/tags/groceries.txt", []byte(`{"task": "half`)); err == nil {
		t.Errorf("an unfinished tags write closed cleanly")
	}
	if r := tagsOf(t, d, "groceries.txt"); r.Task != before.Task {
		t.Fatalf("an unfinished write changed the tags: %+v", r)
	}
	// The empty object clears the tags, as POST /v1/tag with no tags does.
	if err := nfsWriteWhole(v, ".semfs/tags/groceries.txt", []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if r := tagsOf(t, d, "groceries.txt"); r.Task != "" || len(r.RelatedApps) != 0 {
		t.Fatalf("{} left tags: %+v", r)
	}
	// A tags file of a file that does not exist does not exist.
	if _, _, err := v.Lookup(".semfs/tags/nope.txt"); !os.IsNotExist(err) {
		t.Errorf("NFS lookup of the tags of a missing file: %v", err)
	}
}

func getxattr(path, name string) ([]byte, error) {
	buf := make([]byte, 64<<10)
	n, err := syscall.Getxattr(path, name, buf)
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// raw9P is a hand-driven 9P2000.L connection for the extended-attribute
// requests p9's client does not send.
type raw9P struct {
	t *testing.T
	c net.Conn
}

const (
	r9Lerror      = 7
	r9Xattrwalk   = 30
	r9Xattrcreate = 32
	r9Version     = 100
	r9Attach      = 104
	r9Walk        = 110
	r9Read        = 116
	r9Write       = 118
	r9Clunk       = 120
)

func dial9PRaw(t *testing.T, addr, aname string) *raw9P {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(60 * time.Second))
	r := &raw9P{t: t, c: c}
	r.must(r9Version, uint32(1<<16), "9P2000.L")
	r.must(r9Attach, uint32(0), uint32(0xFFFFFFFF), "", aname, uint32(0))
	return r
}

func (r *raw9P) call(typ uint8, fields ...any) ([]byte, error) {
	r.t.Helper()
	b := []byte{0, 0, 0, 0, typ, 1, 0}
	if typ == r9Version {
		b[5], b[6] = 0xFF, 0xFF
	}
	for _, f := range fields {
		switch v := f.(type) {
		case uint8:
			b = append(b, v)
		case uint32:
			b = binary.LittleEndian.AppendUint32(b, v)
		case uint64:
			b = binary.LittleEndian.AppendUint64(b, v)
		case string:
			b = binary.LittleEndian.AppendUint16(b, uint16(len(v)))
			b = append(b, v...)
		case []string: // a Twalk's names
			b = binary.LittleEndian.AppendUint16(b, uint16(len(v)))
			for _, s := range v {
				b = binary.LittleEndian.AppendUint16(b, uint16(len(s)))
				b = append(b, s...)
			}
		case []byte:
			b = append(b, v...)
		}
	}
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	if _, err := r.c.Write(b); err != nil {
		r.t.Fatal(err)
	}
	var hdr [7]byte
	if _, err := io.ReadFull(r.c, hdr[:]); err != nil {
		r.t.Fatal(err)
	}
	body := make([]byte, binary.LittleEndian.Uint32(hdr[:])-7)
	if _, err := io.ReadFull(r.c, body); err != nil {
		r.t.Fatal(err)
	}
	if hdr[4] == r9Lerror {
		return nil, linux.Errno(binary.LittleEndian.Uint32(body))
	}
	return body, nil
}

func (r *raw9P) must(typ uint8, fields ...any) []byte {
	r.t.Helper()
	b, err := r.call(typ, fields...)
	if err != nil {
		r.t.Fatalf("9P request %d: %v", typ, err)
	}
	return b
}

// getxattr reads attribute name of path as Linux's getxattr does: walk a fid,
// Txattrwalk, Tread, clunks.
func (r *raw9P) getxattr(path, name string) (string, error) {
	r.t.Helper()
	r.must(r9Walk, uint32(0), uint32(1), strings.Split(path, "/"))
	defer r.must(r9Clunk, uint32(1))
	body, err := r.call(r9Xattrwalk, uint32(1), uint32(2), name)
	if err != nil {
		return "", err
	}
	defer r.must(r9Clunk, uint32(2))
	size := binary.LittleEndian.Uint64(body)
	rd := r.must(r9Read, uint32(2), uint64(0), uint32(size))
	return string(rd[4:]), nil
}

// setxattr sets it as Linux's setxattr does: walk a fid, Txattrcreate, Twrite,
// and the Tclunk that sets (whose error is the call's).
func (r *raw9P) setxattr(path, name, value string) error {
	r.t.Helper()
	r.must(r9Walk, uint32(0), uint32(1), strings.Split(path, "/"))
	if _, err := r.call(r9Xattrcreate, uint32(1), name, uint64(len(value)), uint32(0)); err != nil {
		r.must(r9Clunk, uint32(1))
		return err
	}
	if len(value) > 0 {
		if _, err := r.call(r9Write, uint32(1), uint64(0), uint32(len(value)), []byte(value)); err != nil {
			r.call(r9Clunk, uint32(1))
			return err
		}
	}
	_, err := r.call(r9Clunk, uint32(1))
	return err
}

func TestMetaXattrsOver9P(t *testing.T) {
	d := metaFixture(t)
	r := dial9PRaw(t, d.NineP, "@notes")
	if got, err := r.getxattr("token-expiry.md", "user.semfs.task"); err != nil || got != "auth token expiry" {
		t.Fatalf("user.semfs.task: %q %v", got, err)
	}
	if got, err := r.getxattr("logs/login-failure.md", "user.semfs.created_by"); err != nil || got != "notes" {
		t.Fatalf("user.semfs.created_by: %q %v", got, err)
	}
	if got, err := r.getxattr("token-expiry.md", "user.semfs.created_at"); err != nil || !strings.HasPrefix(got, "20") {
		t.Fatalf("user.semfs.created_at: %q %v", got, err)
	}
	// Set task and related apps; the socket and a query see them.
	if err := r.setxattr("groceries.txt", "user.semfs.task", "pantry inventory"); err != nil {
		t.Fatalf("setxattr task: %v", err)
	}
	if err := r.setxattr("groceries.txt", "user.semfs.related_apps", "fridge, oven"); err != nil {
		t.Fatalf("setxattr related_apps: %v", err)
	}
	if rec := tagsOf(t, d, "groceries.txt"); rec.Task != "pantry inventory" || !equal(rec.RelatedApps, []string{"fridge", "oven"}) {
		t.Fatalf("after setxattr: %+v", rec)
	}
	if got, err := r.getxattr("groceries.txt", "user.semfs.related_apps"); err != nil || got != "fridge,oven" {
		t.Fatalf("user.semfs.related_apps: %q %v", got, err)
	}
	if got := apiOrder(t, d, "pantry", 0); !equal(got, []string{"groceries.txt"}) {
		t.Fatalf("query after setxattr: %v", got)
	}
	// Read-only fields: EPERM; unknown names keep EOPNOTSUPP; an empty field
	// is absent (ENODATA).
	for _, n := range []string{"user.semfs.created_by", "user.semfs.created_at", "user.semfs.updated_at"} {
		if err := r.setxattr("groceries.txt", n, "x"); !errors.Is(err, linux.EPERM) {
			t.Errorf("setxattr %s: %v, want EPERM", n, err)
		}
	}
	if rec := tagsOf(t, d, "groceries.txt"); rec.CreatedBy != "notes" {
		t.Fatalf("created_by changed: %+v", rec)
	}
	if _, err := r.getxattr("groceries.txt", "user.other"); !errors.Is(err, linux.EOPNOTSUPP) {
		t.Errorf("getxattr user.other: %v, want EOPNOTSUPP", err)
	}
	// listxattr (getfattr -d): the attributes the file has.
	if got, err := r.getxattr("token-expiry.md", ""); err != nil || got != "user.semfs.task\x00user.semfs.related_apps\x00user.semfs.created_by\x00user.semfs.created_at\x00user.semfs.updated_at\x00" {
		t.Errorf("listxattr: %q %v", got, err)
	}
	// The durable record itself (user.semfs) stays the daemon's.
	if _, err := r.getxattr("groceries.txt", "user.semfs"); !errors.Is(err, linux.EOPNOTSUPP) {
		t.Errorf("getxattr user.semfs: %v, want EOPNOTSUPP", err)
	}
	if err := r.setxattr("groceries.txt", "user.semfs", "{}"); !errors.Is(err, linux.EOPNOTSUPP) {
		t.Errorf("setxattr user.semfs: %v, want EOPNOTSUPP", err)
	}
	if _, err := r.getxattr("groceries.txt", "user.semfs.vector"); !errors.Is(err, linux.EOPNOTSUPP) {
		t.Errorf("getxattr user.semfs.vector: %v, want EOPNOTSUPP", err)
	}
	// A directory has no record: no attributes, cleanly.
	if _, err := r.getxattr("logs", "user.semfs.task"); !errors.Is(err, linux.EOPNOTSUPP) {
		t.Errorf("getxattr on a directory: %v, want EOPNOTSUPP", err)
	}
	if err := r.setxattr("groceries.txt", "security.selinux", "x"); !errors.Is(err, linux.EOPNOTSUPP) {
		t.Errorf("setxattr security.selinux: %v, want EOPNOTSUPP", err)
	}
	if err := r.setxattr("groceries.txt", "user.semfs.related_apps", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := r.getxattr("groceries.txt", "user.semfs.related_apps"); !errors.Is(err, linux.ENODATA) {
		t.Errorf("an empty related_apps: %v, want ENODATA", err)
	}
	// A tag written over the socket is what the attribute reads next.
	if _, err := d.Client.Tag(d.Context(), client.TagRequest{Path: "groceries.txt", Task: "from the socket"}); err != nil {
		t.Fatal(err)
	}
	if got, err := r.getxattr("groceries.txt", "user.semfs.task"); err != nil || got != "from the socket" {
		t.Fatalf("task after a socket tag: %q %v", got, err)
	}
}

// TestMetaRefusals: the namespace is read-only except its tags files, over
// both doors, and odd query names work or fail cleanly.
func TestMetaRefusals(t *testing.T) {
	d := metaFixture(t)
	v := d.MountNFS(t, "/", 0)
	root9 := d.Attach9P(t, "/", 0)
	rofs := func(door, what string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s %s succeeded", door, what)
			return
		}
		if !strings.Contains(strings.ToLower(err.Error()), "read-only") && !errors.Is(err, linux.EROFS) && !errors.Is(err, linux.EACCES) &&
			!strings.Contains(err.Error(), "NFS3ERR_ROFS") && !strings.Contains(err.Error(), "NFS3ERR_ACCES") && !strings.Contains(err.Error(), "Permission") {
			t.Errorf("%s %s: %v, want EROFS or EACCES", door, what, err)
		}
	}
	// A name that exists (any name under query/ is a query directory, and
	// .semfs itself) is refused as existing, as the kernel itself would.
	exists := func(door, what string, err error) {
		t.Helper()
		if err == nil || !(os.IsExist(err) || errors.Is(err, linux.EEXIST) || strings.Contains(err.Error(), "exists") || strings.Contains(err.Error(), "NFS3ERR_EXIST")) {
			t.Errorf("%s %s: %v, want EEXIST", door, what, err)
		}
	}
	// NFS.
	_, err := v.Create(".semfs/query/new.txt", 0o644)
	exists("NFS", "create in query/", err)
	_, err = v.Create(".semfs/new.txt", 0o644)
	rofs("NFS", "create in .semfs", err)
	_, err = v.Create(".semfs/tags/brand-new.txt", 0o644)
	rofs("NFS", "create of a tags file with no file", err)
	_, err = v.Mkdir(".semfs/query/x/y", 0o755)
	rofs("NFS", "mkdir in a query dir", err)
	_, err = v.Mkdir(".semfs/tags/newdir", 0o755)
	rofs("NFS", "mkdir in tags/", err)
	_, err = v.Mkdir(".semfs", 0o755)
	exists("NFS", "mkdir .semfs at the root", err)
	_, err = v.Create(".semfs", 0o644)
	exists("NFS", "create .semfs at the root", err)
	rofs("NFS", "remove README", v.Remove(".semfs/query/README"))
	rofs("NFS", "rmdir .semfs/tags", v.RmDir(".semfs/tags"))
	rofs("NFS", "rename out of .semfs", v.Rename(".semfs/query/README", "stolen"))
	rofs("NFS", "rename into .semfs", v.Rename("groceries.txt", ".semfs/tags/groceries2.txt"))
	rofs("NFS", "rename onto .semfs", v.Rename("groceries.txt", ".semfs"))
	exists("NFS", "symlink in query/", v.Symlink("groceries.txt", ".semfs/query/ln"))
	rofs("NFS", "symlink in tags/", v.Symlink("groceries.txt", ".semfs/tags/ln"))
	mode := uint32(0o777)
	rofs("NFS", "chmod of a tags file", v.Setattr(".semfs/tags/groceries.txt", nfsc.Sattr3{Mode: nfsc.SetMode{SetIt: true, Mode: mode}}))
	rofs("NFS", "truncate README", v.Setattr(".semfs/query/README", nfsc.Sattr3{Size: nfsc.SetSize{SetIt: true, Size: 0}}))
	if f, err := v.OpenFile(".semfs/query/README", 0o644); err == nil {
		_, err = f.Write([]byte("x"))
		f.Close()
		rofs("NFS", "write of README", err)
	}
	// 9P.
	q := walk9P(t, root9, ".semfs/query")
	_, _, _, err = q.Create("new.txt", p9.WriteOnly, 0o644, p9.NoUID, p9.NoGID)
	exists("9P", "create in query/", err)
	_, err = q.Mkdir("dir", 0o755, p9.NoUID, p9.NoGID)
	exists("9P", "mkdir in query/", err)
	_, err = q.Symlink("../x", "ln", p9.NoUID, p9.NoGID)
	exists("9P", "symlink in query/", err)
	rofs("9P", "unlink README", q.UnlinkAt("README", 0))
	rofs("9P", "renameat out of query/", q.RenameAt("README", root9, "stolen"))
	g := walk9P(t, root9, "groceries.txt")
	rofs("9P", "link into tags/", walk9P(t, root9, ".semfs/tags").Link(g, "hard"))
	rofs("9P", "chmod of a tags file", walk9P(t, root9, ".semfs/tags/groceries.txt").SetAttr(p9.SetAttrMask{Permissions: true}, p9.SetAttr{Permissions: 0o777}))
	rofs("9P", "chmod of .semfs", walk9P(t, root9, ".semfs").SetAttr(p9.SetAttrMask{Permissions: true}, p9.SetAttr{Permissions: 0o777}))
	readme := walk9P(t, root9, ".semfs/query/README")
	if _, _, err := readme.Open(p9.WriteOnly); err == nil {
		t.Errorf("9P open of README for writing succeeded")
	}
	if _, _, _, err := root9.Create(".semfs", p9.WriteOnly, 0o644, p9.NoUID, p9.NoGID); err == nil {
		t.Errorf("9P create of .semfs at the root succeeded")
	}
	if _, err := os.Lstat(filepath.Join(d.Data, ".semfs")); !os.IsNotExist(err) {
		t.Errorf("a refused create left .semfs in the backing directory: %v", err)
	}

	// Odd query names: each works (a listing, maybe empty) or fails cleanly
	// (EINVAL), never anything else, through both doors.
	long := strings.Repeat("é", 127) + "a" // 255 bytes
	for _, name := range []string{"with spaces and \"quotes\"", "it's a 'query'", "日本語のクエリ", long, "back\\slash", "auth@7", "auth@0", "auth@1001", "   ", "@5"} {
		_, nerr := v.ReadDirPlus(".semfs/query/" + name)
		_, pf, perr := root9.Walk([]string{".semfs", "query", name})
		if pf != nil {
			pf.Close()
		}
		for door, err := range map[string]error{"NFS": nerr, "9P": perr} {
			if err != nil && !errors.Is(err, linux.EINVAL) && !strings.Contains(err.Error(), "NFS3ERR_INVAL") && !strings.Contains(err.Error(), "invalid") {
				t.Errorf("%s query dir %q: %v", door, name, err)
			}
		}
	}
	if _, err := v.ReadDirPlus(".semfs/query/auth@1001"); err == nil {
		t.Errorf("@1001 was listed")
	}
	if _, err := v.ReadDirPlus(".semfs/query/" + long); err != nil {
		t.Errorf("a 255-byte UTF-8 query name: %v", err)
	}
	// The daemon is still serving.
	if got := apiOrder(t, d, "auth", 0); len(got) != 2 {
		t.Fatalf("after the refusals: %v", got)
	}
}

// TestMetaHandlesSurviveRestart: an NFS handle of a query directory, a result
// link and a tags file answers GETATTR after the daemon restarts.
func TestMetaHandlesSurviveRestart(t *testing.T) {
	d := metaFixture(t)
	v := d.MountNFS(t, "/@notes", 0)
	handles := map[string][]byte{}
	for _, p := range []string{".semfs", ".semfs/query/auth problems", ".semfs/query/auth problems/.results.json", ".semfs/tags/logs/login-failure.md", ".semfs/tags/logs"} {
		_, fh, err := v.Lookup(p)
		if err != nil {
			t.Fatalf("lookup %s: %v", p, err)
		}
		handles[p] = fh
	}
	paths := apiOrder(t, d, "auth problems", 50)
	link := ".semfs/query/auth problems/" + wantLinks(paths)[1]
	if _, fh, err := v.Lookup(link); err != nil {
		t.Fatal(err)
	} else {
		handles[link] = fh
	}
	d.Restart()
	v2 := d.MountNFS(t, "/@notes", 0)
	for p, fh := range handles {
		a, err := v2.GetAttr(fh)
		if err != nil {
			t.Errorf("GETATTR of %s's handle after a restart: %v", p, err)
			continue
		}
		if p == link && a.Type != 5 { // NF3LNK
			t.Errorf("%s is type %d after the restart", p, a.Type)
		}
	}
}

// TestMetaDirFlags: --meta-dir renames the namespace, --list-meta-dir lists
// it, and a real file of that name in the backing directory is reported at
// start and never indexed.
func TestMetaDirFlags(t *testing.T) {
	d := metaFixture(t, "--meta-dir", "_q", "--list-meta-dir")
	v := d.MountNFS(t, "/", 0)
	found := false
	for _, n := range nfsNames(t, v, "/") {
		found = found || n == "_q"
	}
	if !found {
		t.Errorf("--list-meta-dir: the root does not list _q")
	}
	if _, _, err := v.Lookup(".semfs"); !os.IsNotExist(err) {
		t.Errorf(".semfs still answers under --meta-dir _q: %v", err)
	}
	if got := nfsNames(t, v, "_q/query/auth problems"); len(got) != 3 {
		t.Errorf("_q/query/auth problems: %q", got)
	}
}

// TestMetaShadowedRealFile: a real file bearing the namespace's name in the
// backing directory is reported at start, hidden by the namespace and never
// indexed.
func TestMetaShadowedRealFile(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(data, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, ".semfs"), []byte("a real semfs file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off", Data: data})
	if !d.WaitLog("bears the --meta-dir name", semfstest.WaitBound) {
		t.Errorf("a real .semfs was not reported at start:\n%s", d.Log())
	}
	for _, p := range apiOrder(t, d, "semfs", 0) {
		t.Errorf("the shadowed real file was indexed: %s", p)
	}
	v := d.MountNFS(t, "/", 0)
	if got := nfsNames(t, v, ".semfs"); !equal(got, []string{"changes", "grep", "query", "tags"}) {
		t.Errorf(".semfs lists %q", got)
	}
}

// TestMetaActsAsTheCaller: a root daemon checks each caller (docs/security.md,
// "What root mode checks"): a query directory lists only the files its caller can reach, and
// tagging needs write access to the file, through tags files (NFS's shared
// descriptor included) and extended attributes alike.
func TestMetaActsAsTheCaller(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the daemon checks callers' permissions only when it runs as root")
	}
	d := metaFixture(t)
	// Root's files (made by uid 0 through the fixture's mounts): one readable
	// by all, one in a directory only root may search.
	root9 := d.Attach9P(t, "@notes", 0)
	if _, err := root9.Mkdir("private", 0o700, p9.NoUID, p9.NoGID); err != nil {
		t.Fatal(err)
	}
	priv := walk9P(t, root9, "private")
	create9P(t, priv, "auth-secret.md", []byte("secret\n"))
	if _, err := d.Client.Tag(d.Context(), client.TagRequest{Path: "private/auth-secret.md", Task: "auth problems secret"}); err != nil {
		t.Fatal(err)
	}
	if got := apiOrder(t, d, "auth problems", 0); len(got) != 3 {
		t.Fatalf("the socket's answer: %v", got)
	}
	const uid = 1000
	v := d.MountNFS(t, "/@notes", uid)
	for _, n := range nfsNames(t, v, ".semfs/query/auth problems") {
		if strings.Contains(n, "secret") {
			t.Errorf("uid %d sees %s, in a directory it cannot search", uid, n)
		}
	}
	user9 := d.Attach9P(t, "@notes", uid)
	for _, n := range names9P(t, walk9P(t, user9, ".semfs/query/auth problems")) {
		if strings.Contains(n, "secret") {
			t.Errorf("uid %d sees %s over 9P", uid, n)
		}
	}
	before := tagsOf(t, d, "groceries.txt")
	if err := nfsWriteWhole(v, ".semfs/tags/groceries.txt", []byte(`{"task": "not yours"}`)); err == nil {
		t.Errorf("uid %d retagged root's 0644 file over NFS", uid)
	}
	if err := write9PWhole(user9, ".semfs/tags/groceries.txt", []byte(`{"task": "not yours"}`)); err == nil {
		t.Errorf("uid %d retagged root's 0644 file over 9P", uid)
	}
	r := dial9PRaw(t, d.NineP, "@notes")
	r.must(r9Attach, uint32(10), uint32(0xFFFFFFFF), "", "@notes", uint32(uid))
	r.must(r9Walk, uint32(10), uint32(11), []string{"groceries.txt"})
	if _, err := r.call(r9Xattrcreate, uint32(11), "user.semfs.task", uint64(3), uint32(0)); err == nil {
		r.must(r9Write, uint32(11), uint64(0), uint32(3), []byte("bad"))
		if _, err := r.call(r9Clunk, uint32(11)); !errors.Is(err, linux.EACCES) {
			t.Errorf("uid %d setxattr on root's file: %v, want EACCES", uid, err)
		}
	}
	if got := tagsOf(t, d, "groceries.txt"); got.Task != before.Task {
		t.Fatalf("a refused caller changed the tags: %+v", got)
	}
	// Readable all the same.
	if b := nfsRead(t, v, ".semfs/tags/groceries.txt"); !bytes.Contains(b, []byte(`"path": "groceries.txt"`)) {
		t.Errorf("uid %d reads %s", uid, b)
	}
}
