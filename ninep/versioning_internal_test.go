package ninep

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/semfs/semfs/server"
)

// TestReaderWaitsForRversion: once a Tversion is handed to p9, the reader
// hands it nothing more until p9's reply to it starts. p9 builds the
// connection's read buffers inside its Tversion handler while its next
// goroutine already serves the next request: a Tread served meanwhile found
// no buffer and panicked inside p9 (FuzzServerConn found it).
func TestReaderWaitsForRversion(t *testing.T) {
	fsys, err := server.New(t.TempDir(), server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Sink: server.SinkFunc(func(context.Context, server.Change) error { return nil })})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	srv := NewServer(fsys, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), MaxMsize: fuzzMsize})
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	c := newConn(srv, 1, a)
	go b.Write(fuzzPrologue()) // Tversion, then Tattach
	buf := make([]byte, 64<<10)
	n, err := c.Read(buf)
	if err != nil || n < headerLen || buf[4] != msgTversion {
		t.Fatalf("first read: %d bytes, %v, want the Tversion", n, err)
	}
	next := make(chan byte, 1)
	go func() {
		n, err := c.Read(buf)
		if err != nil || n < headerLen {
			next <- 0
			return
		}
		next <- buf[4]
	}()
	select {
	case typ := <-next:
		t.Fatalf("the reader handed p9 a message of type %d before the Rversion", typ)
	case <-time.After(100 * time.Millisecond): // it waits (what else it could do, it does at once)
	}
	v := c.versioning.Load()
	if v == nil {
		t.Fatal("no Tversion waits for its reply")
	}
	c.versionReplied(v.tag)
	if typ := <-next; typ != msgTattach {
		t.Fatalf("after the Rversion the reader handed p9 type %d, want the Tattach", typ)
	}
}
