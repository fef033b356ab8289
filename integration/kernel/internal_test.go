package kernel

import (
	"bytes"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
)

func TestModuleLoadOrder(t *testing.T) {
	dep := `kernel/fs/nfs/nfsv3.ko: kernel/fs/nfs/nfs.ko kernel/fs/lockd/lockd.ko kernel/net/sunrpc/sunrpc.ko kernel/fs/netfs/netfs.ko
kernel/fs/nfs/nfs.ko: kernel/fs/lockd/lockd.ko kernel/net/sunrpc/sunrpc.ko kernel/fs/netfs/netfs.ko
kernel/fs/lockd/lockd.ko: kernel/net/sunrpc/sunrpc.ko
kernel/net/sunrpc/sunrpc.ko:
kernel/fs/netfs/netfs.ko:
kernel/net/9p/9pnet_fd.ko: kernel/net/9p/9pnet.ko
kernel/net/9p/9pnet.ko:
kernel/drivers/char/virtio_console.ko.xz:
`
	tests := []struct {
		name string
		want []string
		out  string // basenames joined by " "; "" with err
		err  string
	}{
		{"deps first, reverse order, each once", []string{"nfsv3", "9pnet_fd"},
			"netfs.ko sunrpc.ko lockd.ko nfs.ko nfsv3.ko 9pnet.ko 9pnet_fd.ko", ""},
		{"dash spelling and compressed module", []string{"virtio-console"}, "virtio_console.ko.xz", ""},
		{"shared deps are not repeated", []string{"nfs", "nfsv3"}, "netfs.ko sunrpc.ko lockd.ko nfs.ko nfsv3.ko", ""},
		{"unknown module", []string{"nosuch"}, "", `module "nosuch" is not in modules.dep`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := moduleLoadOrder(strings.NewReader(dep), tc.want)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var base []string
			for _, p := range got {
				base = append(base, p[strings.LastIndex(p, "/")+1:])
			}
			if strings.Join(base, " ") != tc.out {
				t.Fatalf("order = %s, want %s", strings.Join(base, " "), tc.out)
			}
		})
	}
}

// TestCPIORoundTrip parses the newc stream back: headers, names, data,
// 4-byte alignment, parents before children, the trailer and the 512-byte
// padding that lets another archive be appended.
func TestCPIORoundTrip(t *testing.T) {
	a := newCPIOArchive()
	a.File("semfs/lib/x.sh", 0o755, []byte("echo hi\n"))
	a.File("init", 0o700, []byte("#!/bin/sh\n"))
	a.Symlink("bin/sh", "busybox")
	a.Dir("tmp", 0o777)
	var buf bytes.Buffer
	n, err := a.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) || n%512 != 0 {
		t.Fatalf("wrote %d bytes (buffer %d), want a multiple of 512", n, buf.Len())
	}
	type ent struct {
		mode uint32
		data string
	}
	got := map[string]ent{}
	var order []string
	b := buf.Bytes()
	off := 0
	for {
		if string(b[off:off+6]) != "070701" {
			t.Fatalf("bad magic at %d: %q", off, b[off:off+6])
		}
		field := func(i int) uint32 {
			v, err := strconv.ParseUint(string(b[off+6+8*i:off+14+8*i]), 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			return uint32(v)
		}
		mode, size, nameLen := field(1), int(field(6)), int(field(11))
		name := string(b[off+110 : off+110+nameLen-1])
		off = (off + 110 + nameLen + 3) &^ 3
		data := string(b[off : off+size])
		off = (off + size + 3) &^ 3
		if name == "TRAILER!!!" {
			break
		}
		got[name] = ent{mode, data}
		order = append(order, name)
	}
	if rest := b[off:]; len(bytes.Trim(rest, "\x00")) != 0 {
		t.Fatalf("non-zero bytes after the trailer: %s", hex.EncodeToString(rest))
	}
	want := map[string]ent{
		"semfs":          {0o040755, ""},
		"semfs/lib":      {0o040755, ""},
		"semfs/lib/x.sh": {0o100755, "echo hi\n"},
		"init":           {0o100700, "#!/bin/sh\n"},
		"bin/sh":         {0o120777, "busybox"},
		"tmp":            {0o040777, ""},
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("missing %s", name)
			continue
		}
		if g != w {
			t.Errorf("%s: mode %o data %q, want mode %o data %q", name, g.mode, g.data, w.mode, w.data)
		}
	}
	pos := map[string]int{}
	for i, n := range order {
		pos[n] = i
	}
	if pos["semfs"] > pos["semfs/lib"] || pos["semfs/lib"] > pos["semfs/lib/x.sh"] {
		t.Errorf("parents must come before children: %v", order)
	}
}

func TestPattern(t *testing.T) {
	a, b := Pattern("s", 100), Pattern("s", 40)
	if len(a) != 100 || !bytes.Equal(a[:40], b) {
		t.Fatal("Pattern must be deterministic and prefix-stable")
	}
	if bytes.Equal(Pattern("s", 64), Pattern("t", 64)) {
		t.Fatal("different seeds must give different data")
	}
}
