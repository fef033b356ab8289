package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Environment variables keep the reference implementation's names.
const (
	envData   = "BERTH_CONTEXT_DATA"
	envIndex  = "BERTH_CONTEXT_INDEX_DB"
	envSocket = "BERTH_SEMANTIC_FS_SOCKET"
	envModel  = "SEMFS_MODEL_DIR"
)

// paths is where the daemon keeps its state and listens.
type paths struct {
	Data   string // backing directory
	Index  string // Bleve + buntdb + registry + NFS handle map
	Socket string // control socket
}

// defaultPaths are the reference's /var/berth locations when they are writable
// (root, or a prepared sandbox); otherwise a per-user state directory, so that a
// first `semfs serve` works with no setup either way.
func defaultPaths() paths {
	const berth = "/var/berth"
	if writableOrCreatable(berth) {
		return paths{
			Data:   filepath.Join(berth, "context"),
			Index:  filepath.Join(berth, "context.index"),
			Socket: filepath.Join(berth, "semantic-fs.sock"),
		}
	}
	state := os.Getenv("XDG_STATE_HOME")
	if state == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			home = os.TempDir()
		}
		state = filepath.Join(home, ".local", "state")
	}
	dir := filepath.Join(state, "semfs")
	sock := filepath.Join(dir, "semfs.sock")
	if rt := os.Getenv("XDG_RUNTIME_DIR"); rt != "" && writableOrCreatable(rt) {
		sock = filepath.Join(rt, "semfs.sock")
	}
	return paths{Data: filepath.Join(dir, "context"), Index: filepath.Join(dir, "context.index"), Socket: sock}
}

func writableOrCreatable(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			return unix.Access(d, unix.W_OK|unix.X_OK) == nil
		}
		if d == filepath.Dir(d) {
			return false
		}
	}
}

// resolve applies flags over environment over defaults.
func resolve(flagData, flagIndex, flagSocket string) paths {
	p := defaultPaths()
	pick := func(flagVal, env, def string) string {
		if flagVal != "" {
			return flagVal
		}
		if v := os.Getenv(env); v != "" {
			return v
		}
		return def
	}
	p.Data = pick(flagData, envData, p.Data)
	p.Index = pick(flagIndex, envIndex, p.Index)
	p.Socket = pick(flagSocket, envSocket, p.Socket)
	return p
}

// socketPath resolves the control socket for client commands.
func socketPath(flagSocket string) string {
	return resolve("", "", flagSocket).Socket
}

func (p paths) check() error {
	if p.Data == "" || p.Index == "" || p.Socket == "" {
		return fmt.Errorf("data, index and socket paths must not be empty")
	}
	absData, _ := filepath.Abs(p.Data)
	absIndex, _ := filepath.Abs(p.Index)
	if absData == absIndex {
		return fmt.Errorf("the index (%s) must not be the backing directory", p.Index)
	}
	if rel, err := filepath.Rel(absData, absIndex); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("the index (%s) must live beside the backing directory (%s), not inside it: clients would see and change it", p.Index, p.Data)
	}
	return nil
}
