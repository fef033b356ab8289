package control

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The fuzz targets drive the real control server (a real core over a temporary
// backing directory, a real keyword-only index) through its whole handler chain
// with arbitrary input. One server serves every input of a target. For each
// input: no panic reaches the client, no 5xx (nothing here makes the daemon
// really fail), no redirect, every 4xx is {"error":{"code","message"}}, and a
// refused request changes nothing: not the index, the registrations, nor the
// backing directory.

// fuzzEnv is a target's one server.
func fuzzEnv(f *testing.F, snapshot bool) *env {
	return newEnv(f, envOptions{snapshot: snapshot})
}

// try serves r and checks the invariants above.
func (e *env) try(t *testing.T, r *http.Request) {
	before := e.state(t)
	w := e.serve(r)
	body := w.Body.Bytes()
	switch {
	case w.Code >= 500:
		t.Fatalf("%s %q answered %d: %s", r.Method, r.URL.Path, w.Code, body)
	case w.Code >= 300 && w.Code < 400:
		t.Fatalf("%s %q answered a redirect %d", r.Method, r.URL.Path, w.Code)
	case w.Code >= 400:
		checkErrorShape(t, w.Code, body)
		if e.state(t) != before {
			t.Fatalf("%s %q was refused (%d: %s) but changed something", r.Method, r.URL.Path, w.Code, body)
		}
	}
}

// request builds what net/http's server would hand the handler; ok=false for
// what its parser would refuse before any handler ran.
func request(method, path string, header http.Header, body []byte) (*http.Request, bool) {
	if !validToken(method) {
		return nil, false
	}
	for k, vs := range header {
		if !validToken(k) {
			return nil, false
		}
		for _, v := range vs {
			if strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
				return nil, false
			}
		}
	}
	r := &http.Request{
		Method: method, URL: &url.URL{Path: path}, RequestURI: path,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: header, Host: "semfs",
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)),
	}
	return r.WithContext(context.Background()), true
}

func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

func jsonHeader() http.Header { return http.Header{"Content-Type": {"application/json"}} }

// fuzzBody fuzzes one POST route's body.
func fuzzBody(f *testing.F, path string, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{``, `{`, `{}`, `[]`, `null`, `{"x":1}`, "{\"path\":\"\xff\"}", `{"path":"\udc80"}`,
		`{} {}`, `{"limit":1e400}`, strings.Repeat("[", 20000)} {
		f.Add([]byte(s))
	}
	e := fuzzEnv(f, false)
	f.Fuzz(func(t *testing.T, body []byte) {
		r, _ := request(http.MethodPost, path, jsonHeader(), body)
		e.try(t, r)
	})
}

func FuzzRegister(f *testing.F) {
	fuzzBody(f, "/v1/register", `{"app":"editor"}`, `{"app":"a b"}`, `{"app":"`+strings.Repeat("a", 300)+`"}`, `{"app":"x\u0000"}`)
}

func FuzzTag(f *testing.F) {
	fuzzBody(f, "/v1/tag",
		`{"path":"b.txt","task":"review","relatedApps":["editor"]}`,
		`{"path":"/notes/a.txt","task":"t"}`,
		`{"path":"link/a.txt","task":"t"}`,
		`{"path":"../x","task":"t"}`,
		`{"path":"notes","task":"t"}`,
		`{"path":"b.txt","task":"t","embedding":{"model":"use-lite","vector":[0.1,0.2]}}`,
		`{"path":"b.txt","task":"t","embedding":{"model":"all-MiniLM-L6-v2","vector":[1e39]}}`,
		`{"path":"b.txt\u0000","task":"t"}`)
}

func FuzzTags(f *testing.F) {
	fuzzBody(f, "/v1/tags",
		`{"tags":[{"path":"b.txt","task":"one"},{"path":"notes/a.txt","task":"two","relatedApps":["x"]}]}`,
		`{"tags":[{"path":"b.txt","task":"ok"},{"path":"../x","task":"bad"}]}`,
		`{"tags":[{"path":"b.txt","task":"ok"},{"path":"missing","task":"bad"}]}`,
		`{"tags":[]}`)
}

func FuzzQuery(f *testing.F) {
	fuzzBody(f, "/v1/query",
		`{"text":"content"}`, `{"text":"notes","limit":1}`, `{"text":"x","limit":-1}`, `{"text":"x","limit":99999999999}`,
		`{"text":"x","embedding":{"model":"use-lite","vector":[0.5]}}`, `{"embedding":{"model":"m","vector":[]}}`)
}

// FuzzFiles fuzzes the path of GET /v1/files/{path}, as net/http decodes it
// (so any byte, NUL and '%' included).
func FuzzFiles(f *testing.F) {
	for _, s := range []string{"b.txt", "notes/a.txt", "/b.txt", "../health", "notes/../../x", "a\x00b", "link/a.txt",
		"", "./b.txt", "a//b", "\xff", strings.Repeat("a/", 3000)} {
		f.Add(s)
	}
	e := fuzzEnv(f, false)
	f.Fuzz(func(t *testing.T, p string) {
		r, _ := request(http.MethodGet, "/v1/files/"+p, http.Header{}, nil)
		e.try(t, r)
	})
}

// FuzzRequest fuzzes everything net/http would let through to the handler:
// method, path, a Content-Type, one more header and the body, on any route
// (snapshot included: it is cheap over a tiny directory).
func FuzzRequest(f *testing.F) {
	f.Add("GET", "/v1/health", "", "", "", []byte(nil))
	f.Add("POST", "/v1/health", "application/json", "", "", []byte(`{}`))
	f.Add("POST", "/v1/snapshot", "application/json", "", "", []byte(`{}`))
	f.Add("GET", "/v1/snapshot", "", "", "", []byte(nil))
	f.Add("POST", "/v1/tag", "text/plain", "", "", []byte(`{"path":"b.txt","task":"x"}`))
	f.Add("POST", "/v1/tag", "application/json", "Origin", "http://x", []byte(`{"path":"b.txt","task":"x"}`))
	f.Add("POST", "/v1/tag", "application/json; charset=utf-8", "Expect", "100-continue", []byte(`{"path":"b.txt","task":"x"}`))
	f.Add("DELETE", "/v1/files/b.txt", "", "", "", []byte(nil))
	f.Add("GET", "/v1/../v1/health", "", "", "", []byte(nil))
	f.Add("GET", "", "", "", "", []byte(nil))
	f.Add("CONNECT", "/v1/register", "", "", "", []byte(`{"app":"x"}`))
	f.Add("POST", "/v1/register", "application/json", "Referer", "x", []byte(`{"app":"x"}`))
	e := fuzzEnv(f, true)
	f.Fuzz(func(t *testing.T, method, path, ct, key, val string, body []byte) {
		h := http.Header{}
		if ct != "" {
			h.Set("Content-Type", ct)
		}
		if key != "" {
			h[http.CanonicalHeaderKey(key)] = []string{val}
		}
		r, ok := request(method, path, h, body)
		if !ok {
			return
		}
		e.try(t, r)
	})
}
