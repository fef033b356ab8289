package content

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// threadNice is the nice value of the calling thread (the raw system call
// returns 20 − nice).
func threadNice(t *testing.T) int {
	raw, err := unix.Getpriority(unix.PRIO_PROCESS, unix.Gettid())
	if err != nil {
		t.Error(err)
	}
	return 20 - raw
}

// niceFiles records the nice value of the thread each Open runs on, and
// refuses the path "refused" (install logs that at debug level).
type niceFiles struct {
	Dir
	t    *testing.T
	mu   sync.Mutex
	nice []int
}

func (f *niceFiles) Open(ctx context.Context, p string, use func(FileReader) error) error {
	n := threadNice(f.t)
	f.mu.Lock()
	f.nice = append(f.nice, n)
	f.mu.Unlock()
	if p == "refused" {
		return os.ErrPermission
	}
	return f.Dir.Open(ctx, p, use)
}

// niceLog records the nice value of the thread each record is logged on.
type niceLog struct {
	t    *testing.T
	mu   sync.Mutex
	nice []int
}

func (h *niceLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *niceLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *niceLog) WithGroup(string) slog.Handler            { return h }
func (h *niceLog) Handle(_ context.Context, r slog.Record) error {
	n := threadNice(h.t)
	h.mu.Lock()
	h.nice = append(h.nice, n)
	h.mu.Unlock()
	return nil
}

// TestIndexerReadsAtLowestPriority: the indexer reads files on a thread at
// nice 19, and installs what it read (holding the lock greps wait for) at the
// priority of whoever opened the index.
func TestIndexerReadsAtLowestPriority(t *testing.T) {
	own := threadNice(t)
	if own >= 19 {
		t.Skipf("the test runs at nice %d: nothing to tell apart", own)
	}
	root := t.TempDir()
	for _, p := range []string{"a.txt", "refused"} {
		if err := os.WriteFile(filepath.Join(root, p), []byte("some words"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files := &niceFiles{Dir: Dir(root), t: t}
	log := &niceLog{t: t}
	x, err := Open(Options{Files: files, Log: slog.New(log)})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	x.Apply([]Change{{Op: Written, Path: "a.txt"}, {Op: Written, Path: "refused"}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := x.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	files.mu.Lock()
	defer files.mu.Unlock()
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(files.nice) != 2 || files.nice[0] != 19 || files.nice[1] != 19 {
		t.Errorf("files read at nice %v, want 19 each", files.nice)
	}
	// install logs the refused file ("file unreadable").
	if len(log.nice) == 0 {
		t.Fatal("install logged nothing of the refused file")
	}
	for _, n := range log.nice {
		if n != own {
			t.Errorf("install ran at nice %d, want the opener's %d", n, own)
		}
	}
}
