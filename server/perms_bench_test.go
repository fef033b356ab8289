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
