package server_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/semfs/semfs/server"
)

// TestWatchSyncTakesInWhatCameBefore: after Sync returns, every change a host
// process finished before the call has reached the FollowFunc, however long
// the quiet period would have held it back (an hour here: without Sync no
// batch would come at all). Each round makes a different kind of change and
// calls Sync at once, at whatever point the reader is (waiting in a read, in
// its pause after one, or drained already by the Sync before); a Sync with
// nothing pending returns with no batch.
func TestWatchSyncTakesInWhatCameBefore(t *testing.T) {
	f := newWatchFixture(t, server.WatchOptions{Quiet: time.Hour, MaxDelay: time.Hour}, "d")
	ctx := context.Background()
	sync := func() {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second) // a failure bound
		defer cancel()
		if err := f.w.Sync(sctx); err != nil {
			t.Fatalf("Sync: %v", err)
		}
	}
	// taken reports the scopes of every batch handed over by now.
	taken := func() [][]string {
		var out [][]string
		for {
			select {
			case s := <-f.batches:
				out = append(out, s)
			default:
				return out
			}
		}
	}
	coveredBy := func(batches [][]string, p string) bool {
		for _, s := range batches {
			if covers(s, p) {
				return true
			}
		}
		return false
	}
	for i := range 60 {
		var want []string
		switch i % 4 {
		case 0:
			p := "d/f" + strconv.Itoa(i)
			f.write(t, p)
			want = []string{p}
		case 1:
			p := "n" + strconv.Itoa(i) + "/m/f"
			f.write(t, p) // a new directory tree: its files before its watch too
			want = []string{p}
		case 2:
			from, to := "d/f"+strconv.Itoa(i-2), "d/moved"+strconv.Itoa(i)
			if err := os.Rename(filepath.Join(f.dir, from), filepath.Join(f.dir, to)); err != nil {
				t.Fatal(err)
			}
			want = []string{from, to}
		case 3:
			if i%8 == 3 {
				time.Sleep(20 * time.Millisecond) // let the reader settle in its read of an empty queue
			}
			p := "d/moved" + strconv.Itoa(i-1)
			if err := os.Chmod(filepath.Join(f.dir, p), 0o600); err != nil { // IN_ATTRIB
				t.Fatal(err)
			}
			want = []string{p}
		}
		sync()
		got := taken()
		for _, p := range want {
			if !coveredBy(got, p) {
				t.Fatalf("round %d: %q changed before Sync, and the batches handed over by its return are %q", i, p, got)
			}
		}
		sync()
		if again := taken(); len(again) > 0 {
			t.Fatalf("round %d: a Sync with nothing pending handed over %q", i, again)
		}
	}
}

// TestWatchSyncReturnsWithoutInotify: in scan and off modes, and before Run,
// Sync has nothing to wait for.
func TestWatchSyncReturnsWithoutInotify(t *testing.T) {
	for _, mode := range []string{server.WatchScan, server.WatchOff} {
		f := newWatchFixture(t, server.WatchOptions{Mode: mode, Rescan: time.Hour})
		if err := f.w.Sync(context.Background()); err != nil {
			t.Errorf("%s: Sync: %v", mode, err)
		}
	}
	f := newHeldWatchFixture(t, server.WatchOptions{Quiet: time.Hour})
	f.write(t, "f")
	if err := f.w.Sync(context.Background()); err != nil {
		t.Errorf("before Run: Sync: %v", err)
	}
	f.w.Close()
	if err := f.w.Sync(context.Background()); err != nil {
		t.Errorf("after Close: Sync: %v", err)
	}
}

// BenchmarkWatchSync is what every answer pays for it (the daemon's sync):
// with nothing pending (one read of an empty queue and the two goroutines'
// hand-offs), and after one host write (that batch handed over early).
func BenchmarkWatchSync(b *testing.B) {
	for _, pending := range []bool{false, true} {
		name := "idle"
		if pending {
			name = "one-write"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			fsys, err := server.New(dir, server.Options{Logger: slog.New(slog.DiscardHandler), BackingCheck: -1})
			if err != nil {
				b.Fatal(err)
			}
			defer fsys.Close()
			w, err := fsys.Watch(server.WatchOptions{Quiet: time.Hour, MaxDelay: time.Hour, Logger: slog.New(slog.DiscardHandler)},
				func(context.Context, []string) error { return nil })
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			w.Run()
			ctx := context.Background()
			p := filepath.Join(dir, "f")
			b.ResetTimer()
			for range b.N {
				if pending {
					b.StopTimer()
					if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				if err := w.Sync(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
