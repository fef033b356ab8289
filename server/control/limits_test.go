package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"github.com/semfs/semfs/client"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/servertest"
)

// readUntilClosed reads everything c sends until the server closes it; the
// deadline is a failure bound for a server that never does.
func readUntilClosed(t *testing.T, c net.Conn) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	b, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server never closed the connection (read so far: %q)", b)
	}
	return string(b)
}

// TestDribblingClientIsCutOff: a request whose body arrives a byte at a time
// is answered 408 and its connection closed once BodyTimeout has passed since
// its first byte; a header dribbled the same way is cut off too. Nothing of the
// request reaches the index, and both connections are given back.
func TestDribblingClientIsCutOff(t *testing.T) {
	e := newEnv(t, envOptions{limits: server.Limits{BodyTimeout: 300 * time.Millisecond, IdleTimeout: time.Hour, MaxConns: 8}})
	before := e.state(t)

	c := e.dial(t)
	head := "POST /v1/tag HTTP/1.1\r\nHost: semfs\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n"
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	dribbled := make(chan int)
	go func() {
		n := 0
		defer func() { dribbled <- n }()
		body := `{"path":"b.txt","task":"` + strings.Repeat("x", 4000)
		for ; n < len(body); n++ {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
				// The pace is what is tested: a body dribbled a byte at a
				// time must be cut off by the body timeout (300 ms) long
				// before its 4,000 bytes (40 s at this pace) have arrived.
			}
			if _, err := c.Write([]byte{body[n]}); err != nil {
				return
			}
		}
	}()
	got := readUntilClosed(t, c)
	close(stop)
	n := <-dribbled
	if !strings.HasPrefix(got, "HTTP/1.1 408 ") || !strings.Contains(got, `"code":"timeout"`) {
		t.Fatalf("a dribbled body was answered %q, want 408 timeout", got)
	}
	if n >= 4000 {
		t.Fatalf("the whole dribbled body (%d bytes) was read: the body timeout never fired", n)
	}

	h := e.dial(t)
	io.WriteString(h, "GET /v1/he")
	go func() {
		for _, b := range []byte("alth HTTP/1.1\r\nHost: semfs\r\n") {
			time.Sleep(10 * time.Millisecond) // the pace is what is tested: a header dribbled slowly
			if _, err := h.Write([]byte{b}); err != nil {
				return
			}
		}
		// ...and never the blank line that ends the header.
	}()
	readUntilClosed(t, h)

	servertest.WaitFor(t, "both connections to be given back", func() bool { return e.activeConns() == 0 })
	if e.state(t) != before {
		t.Fatal("a request cut off by the body timeout changed the index or the backing directory")
	}
}

// TestIdleKeepAliveClosed: a keep-alive connection with no request in progress
// is closed after IdleTimeout; a connection that never sends anything is closed
// after BodyTimeout (its first request's header clock starts at accept).
func TestIdleKeepAliveClosed(t *testing.T) {
	e := newEnv(t, envOptions{limits: server.Limits{BodyTimeout: time.Hour, IdleTimeout: 200 * time.Millisecond, MaxConns: 8}})
	c := e.dial(t)
	br := bufio.NewReader(c)
	req, _ := http.NewRequest(http.MethodGet, "http://semfs/v1/health", nil)
	for range 2 { // the connection serves more than one request while busy
		if err := req.Write(c); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Close {
			t.Fatalf("health: %d, close=%v", resp.StatusCode, resp.Close)
		}
	}
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("an idle keep-alive connection was not closed: %v", err)
	}
	servertest.WaitFor(t, "the idle connection to be given back", func() bool { return e.activeConns() == 0 })

	e2 := newEnv(t, envOptions{limits: server.Limits{BodyTimeout: 200 * time.Millisecond, IdleTimeout: time.Hour, MaxConns: 8}})
	silent := e2.dial(t)
	if got := readUntilClosed(t, silent); got != "" {
		t.Fatalf("a silent connection was sent %q", got)
	}
	servertest.WaitFor(t, "the silent connection to be given back", func() bool { return e2.activeConns() == 0 })
}

// TestOverCapConnectionRefused: with MaxConns connections held open, one more is
// answered 503 (a JSON error) and closed at once; when one is given back, a new
// connection is served again.
func TestOverCapConnectionRefused(t *testing.T) {
	const max = 3
	e := newEnv(t, envOptions{limits: server.Limits{BodyTimeout: time.Hour, IdleTimeout: time.Hour, MaxConns: max}})
	var held []net.Conn
	for range max {
		c := e.dial(t)
		req, _ := http.NewRequest(http.MethodGet, "http://semfs/v1/health", nil)
		req.Write(c)
		resp, err := http.ReadResponse(bufio.NewReader(c), req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("a connection under the cap: %v %v", resp, err)
		}
		resp.Body.Close()
		held = append(held, c)
	}
	if n := e.activeConns(); n != max {
		t.Fatalf("%d connections counted, want %d", n, max)
	}
	for range 5 {
		over := e.dial(t)
		got := readUntilClosed(t, over)
		resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(got)), nil)
		if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("a connection over the cap was answered %q", got)
		}
		b, _ := io.ReadAll(resp.Body)
		checkErrorShape(t, resp.StatusCode, b)
		over.Close()
	}
	if n := e.activeConns(); n != max {
		t.Fatalf("refused connections changed the count: %d, want %d", n, max)
	}

	held[0].Close()
	servertest.WaitFor(t, "the closed connection's slot", func() bool { return e.activeConns() == max-1 })
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", e.sock)
	}}}
	resp, err := hc.Get("http://semfs/v1/health")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("a connection under the cap again: %v %v", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	for _, c := range held[1:] {
		c.Close()
	}
	hc.CloseIdleConnections()
	servertest.WaitFor(t, "every connection to be given back", func() bool { return e.activeConns() == 0 })
}

// TestSlowAnswerIsNotCutByBodyTimeout: the body timeout bounds the request's
// arrival, not the answer: a request whose handling takes longer than it (here,
// waiting for the change stream) is answered, its context never cancelled.
func TestSlowAnswerIsNotCutByBodyTimeout(t *testing.T) {
	const bodyTimeout = 150 * time.Millisecond
	slow := func(ctx context.Context) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(4 * bodyTimeout):
			// The length is what is tested: an answer that takes longer
			// than the body timeout must still be given.
			return nil
		}
	}
	e := newEnv(t, envOptions{limits: server.Limits{BodyTimeout: bodyTimeout, IdleTimeout: time.Hour, MaxConns: 8}, sync: slow})
	rec, err := client.New(e.sock).Tag(context.Background(), client.TagRequest{Path: "b.txt", Task: "slow answer"})
	if err != nil || rec.Task != "slow answer" {
		t.Fatalf("a slowly answered tag: %+v %v", rec, err)
	}
}

// TestHealthReportsBackingGone: the backing directory renamed away under the
// daemon makes /v1/health answer 503 with the reason, and a tag fails cleanly
// (503) without touching the index; renamed back, all is well again.
func TestHealthReportsBackingGone(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := client.New(e.sock)
	ctx := context.Background()
	if h, err := c.Health(ctx); err != nil || h.Status != "ok" {
		t.Fatalf("health: %+v %v", h, err)
	}
	before := e.dump(t)
	moved := filepath.Join(e.base, "moved")
	if err := os.Rename(e.data, moved); err != nil {
		t.Fatal(err)
	}
	status, _, body := rawGet(t, e.sock, "/v1/health")
	var h Health
	if err := json.Unmarshal(body, &h); err != nil {
		t.Fatal(err)
	}
	if status != http.StatusServiceUnavailable || h.Status != "unhealthy" || h.Error == nil ||
		h.Error.Code != CodeUnavailable || !strings.Contains(h.Error.Message, "moved or removed") {
		t.Fatalf("health with the backing directory gone: %d %s", status, body)
	}
	var ae *client.APIError
	if _, err := c.Health(ctx); !errors.As(err, &ae) || ae.Status != http.StatusServiceUnavailable {
		t.Fatalf("the client's Health with the backing directory gone: %v", err)
	}
	if _, err := c.Tag(ctx, client.TagRequest{Path: "b.txt", Task: "x"}); !errors.As(err, &ae) || ae.Status != http.StatusServiceUnavailable ||
		!strings.Contains(ae.Message, "moved or removed") {
		t.Fatalf("a tag with the backing directory gone: %v", err)
	}
	if string(e.dump(t)) != string(before) {
		t.Fatal("a refused tag changed the index")
	}
	if err := os.Rename(moved, e.data); err != nil {
		t.Fatal(err)
	}
	if h, err := c.Health(ctx); err != nil || h.Status != "ok" {
		t.Fatalf("health with the directory back: %+v %v", h, err)
	}
	if _, err := c.Tag(ctx, client.TagRequest{Path: "b.txt", Task: "x"}); err != nil {
		t.Fatalf("a tag with the directory back: %v", err)
	}
}

// rawGet sends one GET over the socket and returns the status, headers and body.
func rawGet(t *testing.T, sock, path string) (int, http.Header, []byte) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	defer c.CloseIdleConnections()
	resp, err := c.Get("http://semfs" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}
