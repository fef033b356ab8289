package server_test

import (
	"context"
	"os"
	"testing"

	"github.com/semfs/semfs/server"
)

// BenchmarkCallerLstat: one core Lstat as the daemon, as root and as uid 1000
// (which switches the thread's credentials there and back): the switch's cost.
func BenchmarkCallerLstat(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("root mode needs root")
	}
	dir := b.TempDir()
	if err := os.WriteFile(dir+"/f", []byte("x"), 0o644); err != nil {
		b.Fatal(err)
	}
	f, err := server.New(dir, server.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	for name, ctx := range map[string]context.Context{
		"daemon": context.Background(), "uid0": caller(0, 0),
		"uid1000": caller(1000, 1000), "uid1000-groups": caller(1000, 1000, 4000, 4001),
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := f.Lstat(ctx, "f"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCallerCheck64: a content query's check of 64 candidate files in one
// directory for uid 1000, as callerFiles made it before LstatReadable (Access
// of each file, then LstatMany) and with LstatReadable (one statx a file, the
// read permission from the grants Access remembered).
func BenchmarkCallerCheck64(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("root mode needs root")
	}
	dir := b.TempDir()
	var paths []string
	if err := os.Mkdir(dir+"/seed", 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range 64 {
		p := "seed/r" + string(rune('a'+i/26)) + string(rune('a'+i%26))
		if err := os.WriteFile(dir+"/"+p, []byte("x"), 0o644); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
	}
	f, err := server.New(dir, server.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	ctx := caller(1000, 1000)
	b.Run("access-then-lstatmany", func(b *testing.B) {
		for b.Loop() {
			for _, p := range paths {
				if err := f.CheckAccess(ctx, "grep", p, server.MayRead); err != nil {
					b.Fatal(err)
				}
			}
			if _, errs := f.LstatMany(ctx, paths); errs[0] != nil {
				b.Fatal(errs[0])
			}
		}
	})
	b.Run("lstatreadable", func(b *testing.B) {
		for b.Loop() {
			if _, errs := f.LstatReadable(ctx, paths); errs[0] != nil {
				b.Fatal(errs[0])
			}
		}
	})
}
