package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// Flags beat the environment, which beats the defaults, path by path.
func TestResolvePrecedence(t *testing.T) {
	t.Setenv(envData, "")
	t.Setenv(envIndex, "")
	t.Setenv(envSocket, "")
	def := defaultPaths()
	if got := resolve("", "", ""); got != def {
		t.Errorf("no flags, no env: %+v, want the defaults %+v", got, def)
	}
	t.Setenv(envData, "/env/data")
	t.Setenv(envSocket, "/env/sock")
	got := resolve("", "/flag/index", "/flag/sock")
	want := paths{Data: "/env/data", Index: "/flag/index", Socket: "/flag/sock"}
	if got != want {
		t.Errorf("env data, flag index and socket: %+v, want %+v", got, want)
	}
	if got := resolve("/flag/data", "", ""); got.Data != "/flag/data" || got.Index != def.Index || got.Socket != "/env/sock" {
		t.Errorf("flag data over env: %+v", got)
	}
	if got := socketPath(""); got != "/env/sock" {
		t.Errorf("client socket from env: %q", got)
	}
	if got := socketPath("/flag/sock"); got != "/flag/sock" {
		t.Errorf("client socket from flag: %q", got)
	}
}

// The defaults are the reference's /var/berth where it can be written, else a
// per-user state directory (XDG_STATE_HOME) with the socket in XDG_RUNTIME_DIR.
func TestDefaultPaths(t *testing.T) {
	state, rt := t.TempDir(), t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("XDG_RUNTIME_DIR", rt)
	p := defaultPaths()
	if writableOrCreatable("/var/berth") {
		want := paths{Data: "/var/berth/context", Index: "/var/berth/context.index", Socket: "/var/berth/semantic-fs.sock"}
		if p != want {
			t.Errorf("with /var/berth writable: %+v, want %+v", p, want)
		}
		return
	}
	want := paths{Data: filepath.Join(state, "semfs", "context"), Index: filepath.Join(state, "semfs", "context.index"), Socket: filepath.Join(rt, "semfs.sock")}
	if p != want {
		t.Errorf("per-user defaults: %+v, want %+v", p, want)
	}
}

func TestPathsCheck(t *testing.T) {
	for _, c := range []struct {
		p    paths
		want string // "" = accepted
	}{
		{paths{Data: "/s/data", Index: "/s/data.index", Socket: "/s/sock"}, ""},
		{paths{Data: "/s/data", Index: "/s/data2", Socket: "/s/sock"}, ""},
		{paths{Data: "", Index: "/s/i", Socket: "/s/sock"}, "must not be empty"},
		{paths{Data: "/s/data", Index: "/s/data", Socket: "/s/sock"}, "must not be the backing directory"},
		{paths{Data: "/s/data", Index: "/s/data/.index", Socket: "/s/sock"}, "not inside it"},
		{paths{Data: "/s/data", Index: "/s/data/../data/x", Socket: "/s/sock"}, "not inside it"},
	} {
		err := c.p.check()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v refused: %v", c.p, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: %v, want an error saying %q", c.p, err, c.want)
		}
	}
}

// Every usage mistake exits 2 with a message on stderr and nothing on stdout;
// help exits 0 on stdout.
func TestUsageExitCodes(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "none.sock")
	for _, c := range []struct {
		args []string
		want int
	}{
		{nil, exitUsage},
		{[]string{"frobnicate"}, exitUsage},
		{[]string{"query", "--no-such-flag", "x"}, exitUsage},
		{[]string{"get"}, exitUsage},
		{[]string{"get", "a", "b"}, exitUsage},
		{[]string{"tag", "--socket", sock}, exitUsage},
		{[]string{"tag", "--socket", sock, "a.txt"}, exitUsage},                       // neither field: it would clear both
		{[]string{"changes", "--socket", sock, "--follow", "--poll", "0"}, exitUsage}, // a busy loop
		{[]string{"register", "a", "b"}, exitUsage},
		{[]string{"snapshot", "--socket", sock}, exitUsage},
	} {
		var out, errb bytes.Buffer
		got := run(context.Background(), &cliEnv{stdout: &out, stderr: &errb}, c.args)
		if got != c.want || errb.Len() == 0 || out.Len() != 0 {
			t.Errorf("semfs %q: exit %d, stdout %q, stderr %q; want exit %d with a message on stderr only",
				c.args, got, out.String(), errb.String(), c.want)
		}
	}
	for _, h := range []string{"help", "-h", "--help"} {
		var out, errb bytes.Buffer
		if got := run(context.Background(), &cliEnv{stdout: &out, stderr: &errb}, []string{h}); got != exitOK || !strings.Contains(out.String(), "commands:") {
			t.Errorf("semfs %s: exit %d, stdout %q", h, got, out.String())
		}
	}
	var out bytes.Buffer
	if got := run(context.Background(), &cliEnv{stdout: &out, stderr: &out}, []string{"version"}); got != exitOK || strings.TrimSpace(out.String()) != version {
		t.Errorf("semfs version: exit %d, %q", got, out.String())
	}
}

// A client command with no daemon behind the socket exits 3 and says so.
func TestUnreachableExitCode(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "none.sock")
	for _, args := range [][]string{
		{"query", "--socket", sock, "notes"},
		{"get", "--socket", sock, "a.txt"},
		{"status", "--socket", sock},
	} {
		var out, errb bytes.Buffer
		if got := run(context.Background(), &cliEnv{stdout: &out, stderr: &errb}, args); got != exitUnreachable || errb.Len() == 0 {
			t.Errorf("semfs %q: exit %d, stderr %q; want %d", args, got, errb.String(), exitUnreachable)
		}
	}
}
