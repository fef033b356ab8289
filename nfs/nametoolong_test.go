package nfs_test

import (
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

const sNameTooLong = 63

// TestNameTooLong: every procedure that takes a name answers a name of 256
// to 4096 bytes with NFS3ERR_NAMETOOLONG, as ganesha does (a kernel client
// then reports ENAMETOOLONG), on the fast path (LOOKUP, CREATE, MKNOD) and
// go-nfs's route alike, and not GARBAGE_ARGS (which a kernel client reports
// as EIO); a 255-byte name is an ordinary name. Nothing is made.
func TestNameTooLong(t *testing.T) {
	e := newEnv(t)
	c, root := e.client("/")
	if st, _ := c.create(root, "f", 0, 0); st != sOK {
		t.Fatalf("create f: %d", st)
	}
	if st, _ := c.mkdir(root, "d"); st != sOK {
		t.Fatalf("mkdir d: %d", st)
	}
	_, f, _ := c.lookup(root, "f")
	rng := rand.New(rand.NewPCG(3, 63))
	lengths := []int{256, 4096}
	for range 4 {
		lengths = append(lengths, 257+rng.IntN(3839))
	}
	for _, n := range lengths {
		long := strings.Repeat(string(rune('a'+rng.IntN(26))), n)
		calls := map[string]*enc{
			"LOOKUP":           (&enc{}).dirop(root, long),
			"CREATE unchecked": (&enc{}).dirop(root, long).u32(0).sattr(0o644),
			"CREATE guarded":   (&enc{}).dirop(root, long).u32(1).sattr(0o644),
			"CREATE exclusive": (&enc{}).dirop(root, long).u32(2).u64(9),
			"MKDIR":            (&enc{}).dirop(root, long).sattr(0o755),
			"SYMLINK":          (&enc{}).dirop(root, long).sattr(-1).str("t"),
			"MKNOD":            (&enc{}).dirop(root, long).u32(7).sattr(0o644),
			"REMOVE":           (&enc{}).dirop(root, long),
			"RMDIR":            (&enc{}).dirop(root, long),
			"RENAME from":      (&enc{}).dirop(root, long).dirop(root, "g"),
			"RENAME to":        (&enc{}).dirop(root, "f").dirop(root, long),
			"LINK":             (&enc{}).opaque(f).dirop(root, long),
		}
		procs := map[string]uint32{"LOOKUP": pLookup, "MKDIR": pMkdir, "SYMLINK": pSymlink, "MKNOD": pMknod,
			"REMOVE": pRemove, "RMDIR": pRmdir, "LINK": pLink}
		for what, args := range calls {
			proc, ok := procs[what]
			switch {
			case ok:
			case strings.HasPrefix(what, "CREATE"):
				proc = pCreate
			default:
				proc = pRename
			}
			if st, _ := c.call(proc, args); st != sNameTooLong {
				t.Errorf("%s of a %d-byte name: %d, want NAMETOOLONG", what, n, st)
			}
		}
	}
	if st, _, _ := c.lookup(root, strings.Repeat("n", 255)); st != sNoEnt {
		t.Errorf("LOOKUP of a missing 255-byte name: %d, want NOENT", st)
	}
	ents, err := os.ReadDir(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, en := range ents {
		names = append(names, en.Name())
	}
	if strings.Join(names, " ") != "d f" {
		t.Errorf("the backing directory holds %v after the refused calls, want d f", names)
	}
}
