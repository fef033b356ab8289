package control

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/semfs/semfs/client"
)

// TestRequestsAnswered: each route does what it says over the real socket
// with the std-lib client: register binds the caller's uid, tag and tags
// store, query and files answer from the index, health reports.
func TestRequestsAnswered(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := client.New(e.sock)
	ctx := context.Background()

	reg, err := c.Register(ctx, "editor")
	if err != nil || reg.App != "editor" || reg.UID != uint32(os.Getuid()) {
		t.Fatalf("register: %+v %v, want uid %d bound to editor", reg, err, os.Getuid())
	}
	if got := e.reg.All()[uint32(os.Getuid())]; got != "editor" {
		t.Errorf("registry after register: %q", got)
	}

	rec, err := c.Tag(ctx, client.TagRequest{Path: "b.txt", Task: "quarterly revenue report", RelatedApps: []string{"sheet"}})
	if err != nil || rec.Path != "b.txt" || rec.Task != "quarterly revenue report" || !slices.Equal(rec.RelatedApps, []string{"sheet"}) {
		t.Fatalf("tag: %+v %v", rec, err)
	}
	recs, err := c.TagMany(ctx, []client.TagRequest{
		{Path: "notes/a.txt", Task: "meeting notes", RelatedApps: []string{}},
		{Path: "deep/er/c.md", Task: "design sketch", RelatedApps: []string{"editor"}},
	})
	if err != nil || len(recs) != 2 || recs[0].Task != "meeting notes" || recs[1].Task != "design sketch" {
		t.Fatalf("tags: %+v %v", recs, err)
	}
	got, err := c.File(ctx, "deep/er/c.md")
	if err != nil || got.Task != "design sketch" || !slices.Equal(got.RelatedApps, []string{"editor"}) {
		t.Errorf("files: %+v %v", got, err)
	}
	res, err := c.Query(ctx, client.QueryRequest{Text: "quarterly revenue"})
	if err != nil || len(res) == 0 || res[0].Path != "b.txt" {
		t.Errorf("query: %+v %v, want b.txt first", res, err)
	}
	if res, err := c.Query(ctx, client.QueryRequest{Text: "design", Limit: 1}); err != nil || len(res) != 1 {
		t.Errorf("query with limit 1: %d results, %v", len(res), err)
	}

	h, err := c.Health(ctx)
	if err != nil || h.Status != "ok" || h.Registered[strconv.Itoa(os.Getuid())] != "editor" || h.Index.Records != len(seedFiles)+1 {
		t.Errorf("health: %+v %v (want ok, the registration, %d records)", h, err, len(seedFiles)+1)
	}
}

// TestErrorCodes: every refusal carries the stable code its cause calls for
// (clients branch on it, not on the message).
func TestErrorCodes(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, c := range []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"missing file", "GET", "/v1/files/nope.txt", "", 404, CodeNotFound},
		{"tag a missing file", "POST", "/v1/tag", `{"path":"nope.txt","task":"x"}`, 404, CodeNotFound},
		{"escaping path", "POST", "/v1/tag", `{"path":"../x","task":"x"}`, 400, CodeInvalidPath},
		{"escaping file path", "GET", "/v1/files/notes/%2E%2E/%2E%2E/x", "", 400, CodeInvalidPath},
		{"through a symlink", "POST", "/v1/tag", `{"path":"link/a.txt","task":"x"}`, 400, CodeInvalidPath},
		{"a directory", "POST", "/v1/tag", `{"path":"notes","task":"x"}`, 400, CodeInvalidPath},
		{"empty query", "POST", "/v1/query", `{"text":" "}`, 400, CodeInvalid},
		{"negative limit", "POST", "/v1/query", `{"text":"x","limit":-1}`, 400, CodeInvalid},
		{"bad app name", "POST", "/v1/register", `{"app":"a b"}`, 400, CodeInvalid},
		{"unknown field", "POST", "/v1/tag", `{"path":"b.txt","task":"x","owner":"root"}`, 400, CodeBadRequest},
		{"not JSON", "POST", "/v1/query", `text=x`, 400, CodeBadRequest},
		{"too large", "POST", "/v1/tag", `{"path":"b.txt","task":"` + strings.Repeat("x", MaxBody) + `"}`, 413, CodeTooLarge},
		{"wrong method", "GET", "/v1/query", "", 405, CodeMethod},
		{"no route", "GET", "/v1/nothing", "", 404, CodeNotFound},
		{"snapshots not configured", "POST", "/v1/snapshot", `{}`, 404, CodeNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := http.NewRequest(c.method, "http://semfs"+c.path, strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			r.Header.Set("Content-Type", "application/json")
			w := e.serve(r)
			var eb ErrorBody
			if err := json.Unmarshal(w.Body.Bytes(), &eb); err != nil || w.Code != c.status || eb.Error.Code != c.code || eb.Error.Message == "" {
				t.Errorf("%s %s: %d %q, want %d with code %q", c.method, c.path, w.Code, w.Body.String(), c.status, c.code)
			}
			if c.status == 405 && w.Header().Get("Allow") == "" {
				t.Errorf("405 without an Allow header")
			}
		})
	}
}

// TestClosedIndexIsUnavailable: once the index is closed (the daemon is
// stopping), requests are 503 unavailable, never "not found" or "no match",
// and a failing Sync (the change stream cannot be waited for) likewise.
func TestClosedIndexIsUnavailable(t *testing.T) {
	e := newEnv(t, envOptions{})
	if err := e.idx.Close(); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*http.Request{
		mustRequest(t, "GET", "/v1/files/b.txt", ""),
		mustRequest(t, "POST", "/v1/tag", `{"path":"b.txt","task":"x"}`),
	} {
		w := e.serve(r)
		var eb ErrorBody
		json.Unmarshal(w.Body.Bytes(), &eb)
		if w.Code != http.StatusServiceUnavailable || eb.Error.Code != CodeUnavailable {
			t.Errorf("%s %s with the index closed: %d %s, want 503 unavailable", r.Method, r.URL.Path, w.Code, w.Body)
		}
	}

	f := newEnv(t, envOptions{sync: func(context.Context) error { return errors.New("queue stuck") }})
	w := f.serve(mustRequest(t, "GET", "/v1/files/b.txt", ""))
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), CodeUnavailable) {
		t.Errorf("with Sync failing: %d %s, want 503 unavailable", w.Code, w.Body)
	}
}

func mustRequest(t *testing.T, method, path, body string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(method, "http://semfs"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/json")
	return r
}
