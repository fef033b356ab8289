package passage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs/index/content"
)

// workerless is an index of the files under root without its worker: the
// test takes its queue's paths itself (drain), in an order it chooses.
func workerless(t *testing.T, root string) *Index {
	t.Helper()
	x, err := newIndex(Options{Files: content.Dir(root), CPU: 1})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// drain takes every queued path as the worker does (run): off the queue,
// with its offer, if any.
func drain(x *Index) {
	var w workspace
	for {
		p, g, ok, more := x.q.Pop()
		if !more {
			return
		}
		of, shared := x.offers.take(p, g)
		if ok {
			x.index(p, g, of, shared, &w)
		}
	}
}

// holdsFile fails unless x holds p as the file's bytes are now (holds).
func holdsFile(t *testing.T, x *Index, root, p string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, p))
	if err != nil {
		t.Fatal(err)
	}
	holds(t, x, p, data)
}

// holds fails unless x holds p as the bytes data: their size, and their
// passages' hashes, in order, as cutting them gives them.
func holds(t *testing.T, x *Index, p string, data []byte) {
	t.Helper()
	var c cutter
	var want []uint64
	for _, k := range c.cutText(data) {
		want = append(want, k.hash)
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	e := x.files.At(p)
	if e == nil {
		t.Fatalf("%s: not in the index", p)
	}
	var got []uint64
	for _, id := range e.pids {
		got = append(got, x.passes[id].hash)
	}
	if e.size != int64(len(data)) || !slices.Equal(got, want) {
		t.Fatalf("%s: the index holds %d bytes, passages %x; want %d bytes, passages %x", p, e.size, got, len(data), want)
	}
}

func writeText(t *testing.T, root, p, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, p), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sharedText(p, text string) content.SharedFile {
	return content.SharedFile{Path: p, Max: content.DefaultMax, State: content.Indexed, Data: []byte(text),
		Info: content.FileInfo{Size: int64(len(text)), MTime: 1, Regular: true}}
}

// TestOfferIsUsedOnlyForItsGeneration: an offer stands in for the worker's
// own read only while its path is dirty at the generation the offer's read
// reflects. The offers here carry bytes the file never held, so the index
// shows which were used.
func TestOfferIsUsedOnlyForItsGeneration(t *testing.T) {
	root := t.TempDir()
	x := workerless(t, root)
	writeText(t, root, "a.txt", "the file as it is on disk")
	x.Apply([]content.Change{{Op: content.Written, Path: "a.txt"}})

	// Used: read after the change was marked.
	x.Offer(x.Begin(), sharedText("a.txt", "words the offer brought"))
	drain(x)
	holds(t, x, "a.txt", []byte("words the offer brought"))
	if n := x.Stats().Shared; n != 1 {
		t.Fatalf("Stats.Shared = %d, want 1", n)
	}

	// Refused: its read began before the change it would stand for.
	since := x.Begin()
	x.Apply([]content.Change{{Op: content.Written, Path: "a.txt"}})
	x.Offer(since, sharedText("a.txt", "older words of before the write"))
	drain(x)
	holdsFile(t, x, root, "a.txt")

	// Dropped: the path was written again after the offer.
	x.Apply([]content.Change{{Op: content.Written, Path: "a.txt"}})
	x.Offer(x.Begin(), sharedText("a.txt", "words of a version since replaced"))
	writeText(t, root, "a.txt", "the second version on disk")
	x.Apply([]content.Change{{Op: content.Written, Path: "a.txt"}})
	drain(x)
	holdsFile(t, x, root, "a.txt")

	// Refused: another cap, or a path not queued (nothing takes it).
	x.Apply([]content.Change{{Op: content.Written, Path: "a.txt"}})
	f := sharedText("a.txt", "read under another cap")
	f.Max = 10
	x.Offer(x.Begin(), f)
	x.Offer(x.Begin(), sharedText("b.txt", "not queued"))
	if len(x.offers.m) != 0 {
		t.Fatalf("kept %d offers, want none", len(x.offers.m))
	}
	drain(x)
	holdsFile(t, x, root, "a.txt")
	if n := x.Stats().Shared; n != 1 {
		t.Fatalf("Stats.Shared = %d, want 1", n)
	}
}

// TestOffersKeepTheIndexCurrent: writes, offers of reads begun at any
// point (before or after a write's mark, with bytes from before or after
// the write) and the worker's turns, interleaved at random; once the queue
// is drained, the index holds every file as it is on disk, as if the
// worker had read each itself.
func TestOffersKeepTheIndexCurrent(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 27))
			root := t.TempDir()
			x := workerless(t, root)
			const files = 4
			path := func(i int) string { return fmt.Sprintf("f%d.txt", i) }
			text := func() string {
				var b strings.Builder
				for range 1 + rng.IntN(3) {
					for range 3 + rng.IntN(8) {
						b.WriteString(word(rng.IntN(50)))
						b.WriteByte(' ')
					}
					b.WriteString("\n\n")
				}
				return b.String()
			}
			write := func(i int) {
				writeText(t, root, path(i), text())
				x.Apply([]content.Change{{Op: content.Written, Path: path(i)}})
			}
			for i := range files {
				write(i)
			}
			var w workspace
			for range 60 {
				i := rng.IntN(files)
				switch rng.IntN(4) {
				case 0:
					write(i)
				case 1, 2:
					// The content indexer's read: since taken before the
					// bytes are read, a write perhaps between the two or
					// after the read and before the offer.
					since := x.Begin()
					if rng.IntN(3) == 0 {
						write(i)
					}
					data, err := os.ReadFile(filepath.Join(root, path(i)))
					if err != nil {
						t.Fatal(err)
					}
					if rng.IntN(3) == 0 {
						write(i)
					}
					x.Offer(since, sharedText(path(i), string(data)))
				case 3:
					p, g, ok, more := x.q.Pop()
					if !more {
						continue
					}
					of, shared := x.offers.take(p, g)
					if ok {
						x.index(p, g, of, shared, &w)
					}
				}
			}
			drain(x)
			for i := range files {
				holdsFile(t, x, root, path(i))
			}
			if len(x.offers.m) != 0 || x.offers.bytes != 0 {
				t.Fatalf("%d offers (%d bytes) outlived their queue entries", len(x.offers.m), x.offers.bytes)
			}
		})
	}
}

// TestContentIndexerShares: the content indexer, with the passage index as
// its Sharer, hands over every text file it reads; the passage index then
// reads none of them again, and holds each as it is on disk.
func TestContentIndexerShares(t *testing.T) {
	root := t.TempDir()
	x := workerless(t, root)
	const n = 30
	var cs []content.Change
	for i := range n {
		p := fmt.Sprintf("f%02d.txt", i)
		writeText(t, root, p, fmt.Sprintf("%s %s\n\n%s", word(i), word(i+1), word(2*i)))
		cs = append(cs, content.Change{Op: content.Written, Path: p})
	}
	writeText(t, root, "bin.dat", "\x00\x01 not text")
	cs = append(cs, content.Change{Op: content.Written, Path: "bin.dat"})
	files := &countingFiles{Files: content.Dir(root)}
	cx, err := content.Open(content.Options{Files: files, Share: x})
	if err != nil {
		t.Fatal(err)
	}
	defer cx.Close()
	// A batch of the change stream, to both (the passage index first: the
	// content indexer waits for a pause before it reads, but a stalled
	// test could pass it between the two).
	x.Apply(cs)
	cx.Apply(cs)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cx.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	x.opt.Files = files
	opened := files.n
	drain(x)
	if files.n != opened {
		t.Fatalf("the passage index opened %d files the content indexer had read", files.n-opened)
	}
	if got := x.Stats().Shared; got != n+1 {
		t.Fatalf("Stats.Shared = %d, want %d", got, n+1)
	}
	for _, c := range cs[:n] {
		holdsFile(t, x, root, c.Path)
	}
	if e := x.files.At("bin.dat"); e != nil {
		t.Fatalf("a binary file has passages: %+v", e)
	}
}

// countingFiles counts the files opened through it.
type countingFiles struct {
	content.Files
	n int
}

func (f *countingFiles) Open(ctx context.Context, p string, use func(content.FileReader) error) error {
	f.n++
	return f.Files.Open(ctx, p, use)
}
