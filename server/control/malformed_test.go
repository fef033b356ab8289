package control

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/servertest"
)

// TestMalformedRequestsChangeNothing sends hostile and broken requests over the
// real socket: each gets a clear 4xx in the JSON error shape, and nothing of
// the index, the registrations or the backing directory changes.
func TestMalformedRequestsChangeNothing(t *testing.T) {
	e := newEnv(t, envOptions{})
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	cases := []struct {
		name               string
		method, path, body string
		ct                 string // "" means application/json
		header             [2]string
		status             int
	}{
		{name: "truncated JSON", status: 400, method: "POST", path: "/v1/tag", body: `{"path":"b.txt"`},
		{name: "not JSON", status: 400, method: "POST", path: "/v1/tag", body: `path=b.txt`},
		{name: "empty body", status: 400, method: "POST", path: "/v1/tag", body: ``},
		{name: "unknown field", status: 400, method: "POST", path: "/v1/tag", body: `{"path":"b.txt","task":"x","owner":"root"}`},
		{name: "trailing object", status: 400, method: "POST", path: "/v1/tag", body: `{"path":"b.txt","task":"x"} {}`},
		{name: "trailing garbage", status: 400, method: "POST", path: "/v1/tag", body: `{"path":"b.txt","task":"x"}]`},
		{name: "array not object", status: 400, method: "POST", path: "/v1/tag", body: `[{"path":"b.txt"}]`},
		{name: "huge number in vector", status: 400, method: "POST", path: "/v1/tag", body: `{"path":"b.txt","task":"x","embedding":{"model":"m","vector":[1e400]}}`},
		{name: "float32 overflow", status: 400, method: "POST", path: "/v1/tag", body: `{"path":"b.txt","task":"x","embedding":{"model":"m","vector":[1e39]}}`},
		{name: "NaN-free but empty vector", status: 400, method: "POST", path: "/v1/tag", body: `{"path":"b.txt","task":"x","embedding":{"model":"m","vector":[]}}`},
		{name: "huge limit", status: 400, method: "POST", path: "/v1/query", body: `{"text":"x","limit":1e30}`},
		{name: "limit beyond int64", status: 400, method: "POST", path: "/v1/query", body: `{"text":"x","limit":99999999999999999999999}`},
		{name: "negative limit", status: 400, method: "POST", path: "/v1/query", body: `{"text":"x","limit":-1}`},
		{name: "empty query", status: 400, method: "POST", path: "/v1/query", body: `{"text":"  "}`},
		{name: "deeply nested", status: 400, method: "POST", path: "/v1/tag", body: `{"path":"b.txt","task":"x","relatedApps":` + deep + `}`},
		{name: "deeply nested unknown field", status: 400, method: "POST", path: "/v1/query", body: `{"text":"x","z":` + deep + `}`},
		{name: "invalid UTF-8 in path", status: 400, method: "POST", path: "/v1/tag", body: "{\"path\":\"b\xff.txt\",\"task\":\"x\"}"},
		{name: "invalid UTF-8 in task", status: 400, method: "POST", path: "/v1/tag", body: "{\"path\":\"b.txt\",\"task\":\"\xc3\x28\"}"},
		{name: "lone surrogate escape", status: 400, method: "POST", path: "/v1/tag", body: `{"path":"b\udc80.txt","task":"x"}`},
		{name: "high surrogate without its pair", status: 400, method: "POST", path: "/v1/tag", body: `{"path":"b.txt","task":"\ud83d x"}`},
		{name: "NUL in path", status: 400, method: "POST", path: "/v1/tag", body: `{"path":"b.txt\u0000","task":"x"}`},
		{name: "dot-dot path", status: 400, method: "POST", path: "/v1/tag", body: `{"path":"../outside/secret","task":"x"}`},
		{name: "dot-dot inside path", status: 400, method: "POST", path: "/v1/tag", body: `{"path":"notes/../../x","task":"x"}`},
		{name: "absolute path is read relative (and is missing)", status: 404, method: "POST", path: "/v1/tag", body: `{"path":"/etc/passwd","task":"x"}`},
		{name: "path through a symlink", status: 400, method: "POST", path: "/v1/tag", body: `{"path":"link/a.txt","task":"x"}`},
		{name: "a directory", status: 400, method: "POST", path: "/v1/tag", body: `{"path":"notes","task":"x"}`},
		{name: "empty path", status: 400, method: "POST", path: "/v1/tag", body: `{"path":"","task":"x"}`},
		{name: "path too long", status: 400, method: "POST", path: "/v1/tag", body: `{"path":"` + strings.Repeat("a/", 3000) + `","task":"x"}`},
		{name: "task too long", status: 400, method: "POST", path: "/v1/tag", body: `{"path":"b.txt","task":"` + strings.Repeat("x", MaxTask+1) + `"}`},
		{name: "control character in related app", status: 400, method: "POST", path: "/v1/tag", body: `{"path":"b.txt","task":"x","relatedApps":["a\u0007"]}`},
		{name: "wrong type", status: 400, method: "POST", path: "/v1/tag", body: `{"path":7,"task":"x"}`},
		{name: "body over the limit", status: 413, method: "POST", path: "/v1/tag", body: `{"path":"b.txt","task":"` + strings.Repeat("x", MaxBody) + `"}`},
		{name: "not JSON content type", status: 415, ct: "text/plain", method: "POST", path: "/v1/tag", body: `{"path":"b.txt","task":"x"}`},
		{name: "wrong method", status: 405, method: "GET", path: "/v1/tag"},
		{name: "browser origin", status: 403, header: [2]string{"Origin", "http://evil.example"}, method: "POST", path: "/v1/tag", body: `{"path":"b.txt","task":"x"}`},
		{name: "no route", status: 404, method: "GET", path: "/v2/anything"},
		{name: "empty batch", status: 400, method: "POST", path: "/v1/tags", body: `{"tags":[]}`},
		{name: "batch with one bad entry", status: 400, method: "POST", path: "/v1/tags", body: `{"tags":[{"path":"b.txt","task":"ok"},{"path":"../x","task":"bad"}]}`},
		{name: "batch with a missing file", status: 404, method: "POST", path: "/v1/tags", body: `{"tags":[{"path":"b.txt","task":"ok"},{"path":"nope","task":"bad"}]}`},
		{name: "empty app", status: 400, method: "POST", path: "/v1/register", body: `{"app":""}`},
		{name: "app with NUL", status: 400, method: "POST", path: "/v1/register", body: `{"app":"a\u0000b"}`},
		{name: "file: dot-dot", status: 400, method: "GET", path: "/v1/files/../health"},
		{name: "file: escaped dot-dot", status: 400, method: "GET", path: "/v1/files/notes/%2E%2E/%2E%2E/x"},
		{name: "file: NUL", status: 400, method: "GET", path: "/v1/files/b.txt%00"},
		{name: "file: empty", status: 400, method: "GET", path: "/v1/files/"},
		{name: "file: no slash", status: 400, method: "GET", path: "/v1/files"},
		{name: "file: doubled slash", status: 400, method: "GET", path: "/v1/files//b.txt"},
		{name: "file: missing", status: 404, method: "GET", path: "/v1/files/nope.txt"},
		{name: "health: unclean", status: 400, method: "GET", path: "/v1/./health"},
	}
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", e.sock)
	}}}
	defer c.CloseIdleConnections()
	before := e.state(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, "http://semfs"+tc.path, bytes.NewReader([]byte(tc.body)))
			if err != nil {
				t.Fatal(err)
			}
			ct := tc.ct
			if ct == "" {
				ct = "application/json"
			}
			req.Header.Set("Content-Type", ct)
			if tc.header[0] != "" {
				req.Header.Set(tc.header[0], tc.header[1])
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, b)
			}
			checkErrorShape(t, resp.StatusCode, b)
			if after := e.state(t); after != before {
				t.Fatal("a refused request changed the index, the registrations or the backing directory")
			}
		})
	}
}

// TestRawMalformedBytes: requests no HTTP client library would send, written as
// raw bytes: the connection is answered or closed, never left hanging, and
// nothing changes.
func TestRawMalformedBytes(t *testing.T) {
	e := newEnv(t, envOptions{limits: server.Limits{BodyTimeout: 2 * time.Second, MaxConns: 16}})
	before := e.state(t)
	for i, raw := range []string{
		"\x00\x01\x02\x03\r\n\r\n",
		"POST /v1/tag HTTP/1.1\r\nHost: semfs\r\nContent-Length: -5\r\n\r\n",
		"POST /v1/tag HTTP/1.1\r\nHost: semfs\r\nContent-Length: 99999999999999999999999\r\n\r\n",
		"POST /v1/tag HTTP/1.1\r\nHost: semfs\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n",
		"POST /v1/tag HTTP/1.1\r\nHost: semfs\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"POST /v1/tag HTTP/1.1\r\nHost: semfs\r\nContent-Length: 40\r\n\r\n{\"path\":\"b.txt\",\"task\":\"short\"}",
		"GET /v1/files/b.txt\x00 HTTP/1.1\r\nHost: semfs\r\n\r\n",
		"GET " + strings.Repeat("/a", 40000) + " HTTP/1.1\r\nHost: semfs\r\n\r\n",
		"GET /v1/health HTTP/1.1\r\nHost: semfs\r\nX: " + strings.Repeat("y", 100<<10) + "\r\n\r\n",
		"GET /v1/health HTTP/9.9\r\nHost: semfs\r\n\r\n",
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			conn := e.dial(t)
			io.WriteString(conn, raw)
			// Half-close: the server sees the end of what the client sends.
			conn.(*net.UnixConn).CloseWrite()
			got := readUntilClosed(t, conn)
			// net/http answers what it cannot parse itself, in plain text
			// (4xx, or 505 for an unknown HTTP version).
			if got != "" && !strings.HasPrefix(got, "HTTP/1.1 4") && !strings.HasPrefix(got, "HTTP/1.1 505") {
				t.Fatalf("answered %q", got)
			}
			if e.state(t) != before {
				t.Fatal("a malformed request changed something")
			}
		})
	}
	servertest.WaitFor(t, "every connection to be given back", func() bool { return e.activeConns() == 0 })
}
