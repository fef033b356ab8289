package nfs_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDamagedHandleMap: the handle map is only a cache, so a damaged one does
// not stop the start (issue 11): it is set aside as .damaged-<time>, a new one
// is made, the log says handles may go stale, and old handles answer STALE
// (never another file) while new mounts work.
func TestDamagedHandleMap(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"garbage", func(t *testing.T, path string) {
			if err := os.WriteFile(path, bytes.Repeat([]byte("\x00garbage\xff"), 100), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"garbage after a valid start", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte("\x01junk\r\n*3\r\n$3\r\nset\r\n"))
			f.Close()
		}},
		{"wrong key", func(t *testing.T, path string) {
			// A well-formed buntdb log whose key is not 32 bytes.
			if err := os.WriteFile(path, []byte("*3\r\n$3\r\nset\r\n$1\r\nk\r\n$5\r\nshort\r\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"a directory", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			c, root := e.client("/@notes")
			_, f := c.create(root, "f", 0, 0)
			c.c.Close()
			e.stop()
			path := filepath.Join(e.state, "nfs-handles.db")
			tc.damage(t, path)

			e.start() // fails the test if the start fails
			aside, _ := filepath.Glob(path + ".damaged-*")
			if len(aside) != 1 {
				t.Fatalf("set aside: %v", aside)
			}
			if fi, err := os.Stat(aside[0]); err != nil || !fi.IsDir() && fi.Size() == 0 {
				t.Errorf("the damaged map was not kept as it was: %v %v", fi, err)
			}
			if !strings.Contains(e.log.String(), "handle map was damaged") || !strings.Contains(e.log.String(), "STALE") {
				t.Errorf("no warning in the log:\n%s", e.log.String())
			}
			c2 := dialRaw(t, e.addr)
			if st, _ := c2.getattr(f); st != sStale {
				t.Errorf("a handle from the damaged map: %d, want STALE", st)
			}
			c3, root3 := e.client("/@notes")
			if st, fh, _ := c3.lookup(root3, "f"); st != sOK {
				t.Fatalf("lookup after the rebuild: %d", st)
			} else if st, _ := c3.getattr(fh); st != sOK {
				t.Fatalf("getattr after the rebuild: %d", st)
			}
			// The next start finds the new map sound.
			e.restart()
			if aside2, _ := filepath.Glob(path + ".damaged-*"); len(aside2) != 1 {
				t.Errorf("set aside again on a clean restart: %v", aside2)
			}
		})
	}
}

// TestMissingHandleMap: a deleted handle map is made anew; the start goes on.
func TestMissingHandleMap(t *testing.T) {
	e := newEnv(t)
	c, root := e.client("/@notes")
	_, f := c.create(root, "f", 0, 0)
	c.c.Close()
	e.stop()
	if err := os.Remove(filepath.Join(e.state, "nfs-handles.db")); err != nil {
		t.Fatal(err)
	}
	e.start()
	if st, _ := dialRaw(t, e.addr).getattr(f); st != sStale {
		t.Errorf("a handle from the deleted map: %d, want STALE", st)
	}
	if !strings.Contains(e.log.String(), "no NFS handle map") {
		t.Errorf("no note in the log:\n%s", e.log.String())
	}
}
