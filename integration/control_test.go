package integration_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/embed/embedtest"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/integration/semfstest"
	"github.com/semfs/semfs/server/control"
	"github.com/semfs/semfs/server/servertest"
)

// writeFiles puts files straight into a backing directory (as a process outside
// semfs would); the daemon learns of them by reconciling at start.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func paths(res []client.Result) []string {
	out := make([]string, len(res))
	for i, r := range res {
		out[i] = r.Path
	}
	return out
}

// rawRequest sends bytes over the control socket as any HTTP client would.
func rawRequest(t *testing.T, sock, method, path, contentType string, body []byte) (int, control.ErrorBody, []byte) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	req, err := http.NewRequest(method, "http://semfs"+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var eb control.ErrorBody
	json.Unmarshal(b, &eb)
	return resp.StatusCode, eb, b
}

func TestRegisterTagQueryRoundTrip(t *testing.T) {
	base := t.TempDir()
	data := filepath.Join(base, "data")
	writeFiles(t, data, map[string]string{
		"notes/auth/login-failure.md": "users cannot log in",
		"src/server/main.go":          "package main",
		"reports/q3-revenue.csv":      "1,2,3",
	})
	d := semfstest.Start(t, semfstest.Options{Data: data, ModelDir: "off"})
	ctx := d.Context()

	reg, err := d.Client.Register(ctx, "notes")
	if err != nil {
		t.Fatal(err)
	}
	if reg.App != "notes" || reg.UID != uint32(os.Getuid()) {
		t.Fatalf("register answered %+v; want app notes bound to uid %d", reg, os.Getuid())
	}
	rec, err := d.Client.Tag(ctx, client.TagRequest{Path: "notes/auth/login-failure.md", Task: "fix auth bug", RelatedApps: []string{"code-editor"}})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Task != "fix auth bug" || len(rec.RelatedApps) != 1 || rec.RelatedApps[0] != "code-editor" {
		t.Fatalf("tag answered %+v", rec)
	}
	res, err := d.Client.Query(ctx, client.QueryRequest{Text: "auth"})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(res); len(got) != 1 || got[0] != "notes/auth/login-failure.md" {
		t.Fatalf("query auth = %v", got)
	}
	// Results carry metadata only.
	var raw map[string]any
	_, _, body := rawRequest(t, d.Socket, "POST", "/v1/query", "application/json", []byte(`{"text":"auth"}`))
	json.Unmarshal(body, &raw)
	first := raw["results"].([]any)[0].(map[string]any)
	for _, k := range []string{"path", "createdBy", "task", "relatedApps", "createdAt", "updatedAt", "score"} {
		if _, ok := first[k]; !ok {
			t.Errorf("result lacks %q: %v", k, first)
		}
	}
	if len(first) != 7 {
		t.Errorf("result has fields beyond the metadata: %v", first)
	}
	// Tagging again replaces.
	if _, err := d.Client.Tag(ctx, client.TagRequest{Path: "/notes/auth/login-failure.md", Task: "write release notes"}); err != nil {
		t.Fatal(err)
	}
	got, err := d.Client.File(ctx, "notes/auth/login-failure.md")
	if err != nil || got.Task != "write release notes" || len(got.RelatedApps) != 0 {
		t.Fatalf("after retag: %+v %v", got, err)
	}
	// Limit trims, no limit returns every match.
	all, err := d.Client.Query(ctx, client.QueryRequest{Text: "notes src reports"})
	if err != nil || len(all) != 3 {
		t.Fatalf("query all = %v %v", paths(all), err)
	}
	one, err := d.Client.Query(ctx, client.QueryRequest{Text: "notes src reports", Limit: 1})
	if err != nil || len(one) != 1 || one[0].Path != all[0].Path {
		t.Fatalf("limit 1 = %v, want the first of %v", paths(one), paths(all))
	}

	// The CLI: tables by default, --json for scripts, meaningful exit codes.
	out, _, code := d.Run("query", "release", "--json")
	if code != 0 || !strings.Contains(out, `"path": "notes/auth/login-failure.md"`) {
		t.Fatalf("semfs query --json: code %d\n%s", code, out)
	}
	out, _, code = d.Run("query", "release")
	if code != 0 || !strings.Contains(out, "SCORE") || !strings.Contains(out, "login-failure.md") {
		t.Fatalf("semfs query: code %d\n%s", code, out)
	}
	if _, _, code = d.Run("query", "zzzz-nothing"); code != 1 {
		t.Fatalf("query with no match exits %d, want 1", code)
	}
	if _, _, code = d.Run("tag", "no/such/file", "--task", "x"); code != 1 {
		t.Fatalf("tag of a missing file exits %d, want 1", code)
	}
	if _, _, code = d.Run("tag", "../etc/passwd", "--task", "x"); code != 4 {
		t.Fatalf("tag of an escaping path exits %d, want 4", code)
	}
	if _, _, code = d.Run("query"); code != 2 {
		t.Fatalf("query without text exits %d, want 2", code)
	}
	out, _, code = d.Run("tag", "src/server/main.go", "--task", "entry point", "--related-apps", "build,ci")
	if code != 0 || !strings.Contains(out, "build,ci") {
		t.Fatalf("semfs tag: code %d\n%s", code, out)
	}
	out, _, code = d.Run("status")
	if code != 0 || !strings.Contains(out, d.Data) || !strings.Contains(out, "uid "+fmt.Sprint(os.Getuid())+" = notes") {
		t.Fatalf("semfs status: code %d\n%s", code, out)
	}
	stopped := semfstest.Start(t, semfstest.Options{ModelDir: "off"})
	stopped.Stop()
	if _, _, code = stopped.Run("status"); code != 3 {
		t.Fatalf("status without a daemon exits %d, want 3", code)
	}
}

func TestMalformedRequestsChangeNothing(t *testing.T) {
	base := t.TempDir()
	data := filepath.Join(base, "data")
	writeFiles(t, data, map[string]string{"a.txt": "a", "dir/b.txt": "b"})
	d := semfstest.Start(t, semfstest.Options{Data: data, ModelDir: "off"})
	ctx := d.Context()
	if _, err := d.Client.Tag(ctx, client.TagRequest{Path: "a.txt", Task: "original"}); err != nil {
		t.Fatal(err)
	}
	before, _ := d.Client.Health(ctx)
	big := append([]byte(`{"path":"a.txt","task":"`), bytes.Repeat([]byte("x"), control.MaxBody)...)
	big = append(big, []byte(`"}`)...)
	cases := []struct {
		name, method, path, ctype string
		body                      string
		raw                       []byte
		status                    int
		code                      string
	}{
		{"malformed JSON", "POST", "/v1/tag", "application/json", `{"path":`, nil, 400, control.CodeBadRequest},
		{"not an object", "POST", "/v1/tag", "application/json", `[1,2]`, nil, 400, control.CodeBadRequest},
		{"unknown field", "POST", "/v1/tag", "application/json", `{"path":"a.txt","task":"x","createdBy":"me"}`, nil, 400, control.CodeBadRequest},
		{"trailing data", "POST", "/v1/tag", "application/json", `{"path":"a.txt","task":"x"} {"path":"a.txt"}`, nil, 400, control.CodeBadRequest},
		{"empty app", "POST", "/v1/register", "application/json", `{"app":""}`, nil, 400, control.CodeInvalid},
		{"bad app chars", "POST", "/v1/register", "application/json", `{"app":"../x"}`, nil, 400, control.CodeInvalid},
		{"dotdot path", "POST", "/v1/tag", "application/json", `{"path":"../../etc/passwd","task":"x"}`, nil, 400, control.CodeInvalidPath},
		{"inner dotdot", "POST", "/v1/tag", "application/json", `{"path":"dir/../../x","task":"x"}`, nil, 400, control.CodeInvalidPath},
		{"absolute outside", "POST", "/v1/tag", "application/json", `{"path":"/etc/passwd","task":"x"}`, nil, 404, control.CodeNotFound},
		{"NUL in path", "POST", "/v1/tag", "application/json", `{"path":"a\u0000b","task":"x"}`, nil, 400, control.CodeInvalidPath},
		{"directory", "POST", "/v1/tag", "application/json", `{"path":"dir","task":"x"}`, nil, 400, control.CodeInvalidPath},
		{"missing file", "POST", "/v1/tag", "application/json", `{"path":"nope.txt","task":"x"}`, nil, 404, control.CodeNotFound},
		{"oversized body", "POST", "/v1/tag", "application/json", "", big, 413, control.CodeTooLarge},
		{"wrong content type", "POST", "/v1/tag", "text/plain", `{"path":"a.txt","task":"x"}`, nil, 415, control.CodeBadRequest},
		{"unknown route", "POST", "/v1/nope", "application/json", `{}`, nil, 404, control.CodeNotFound},
		{"unversioned route", "POST", "/tag", "application/json", `{}`, nil, 404, control.CodeNotFound},
		{"wrong method", "GET", "/v1/tag", "", "", nil, 405, control.CodeMethod},
		{"empty query", "POST", "/v1/query", "application/json", `{"text":"  "}`, nil, 400, control.CodeInvalid},
		{"negative limit", "POST", "/v1/query", "application/json", `{"text":"a","limit":-1}`, nil, 400, control.CodeInvalid},
		{"unknown rank", "POST", "/v1/query", "application/json", `{"text":"a","rank":"fancy"}`, nil, 400, control.CodeInvalid},
		{"query vector of unknown model", "POST", "/v1/query", "application/json", `{"text":"a","embedding":{"model":"nope","vector":[1,0]}}`, nil, 400, control.CodeInvalid},
		{"query vector wrong dims", "POST", "/v1/query", "application/json", `{"text":"a","embedding":{"model":"all-MiniLM-L6-v2","vector":[1,0]}}`, nil, 400, control.CodeInvalid},
		{"tag vector wrong dims", "POST", "/v1/tag", "application/json", `{"path":"a.txt","task":"y","embedding":{"model":"all-MiniLM-L6-v2","vector":[1,0]}}`, nil, 400, control.CodeInvalid},
		{"file escaping", "GET", "/v1/files/..%2f..%2fetc%2fpasswd", "", "", nil, 400, control.CodeInvalidPath},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := c.raw
			if body == nil {
				body = []byte(c.body)
			}
			status, eb, raw := rawRequest(t, d.Socket, c.method, c.path, c.ctype, body)
			if status != c.status || eb.Error.Code != c.code || eb.Error.Message == "" {
				t.Fatalf("got %d %q: %s; want %d %q", status, eb.Error.Code, raw, c.status, c.code)
			}
		})
	}
	rec, err := d.Client.File(ctx, "a.txt")
	if err != nil || rec.Task != "original" {
		t.Fatalf("a bad request changed the record: %+v %v", rec, err)
	}
	after, _ := d.Client.Health(ctx)
	if fmt.Sprint(before.Registered) != fmt.Sprint(after.Registered) {
		t.Fatalf("a bad request changed the registry: %v -> %v", before.Registered, after.Registered)
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Fatal(err)
	}
	var ae *client.APIError
	if _, err := d.Client.Tag(ctx, client.TagRequest{Path: "../x"}); !errors.As(err, &ae) || ae.Status != 400 {
		t.Fatalf("client error type: %v", err)
	}
}

func TestTagsSurviveRestartAndReconcile(t *testing.T) {
	base := t.TempDir()
	data := filepath.Join(base, "data")
	writeFiles(t, data, map[string]string{
		"keep.md": "k", "move-me.md": "m", "delete-me.md": "d", "edit-me.md": "e", "dir/inner.md": "i",
	})
	d := semfstest.Start(t, semfstest.Options{Data: data, ModelDir: "off"})
	ctx := d.Context()
	for _, p := range []string{"keep.md", "move-me.md", "delete-me.md", "edit-me.md", "dir/inner.md"} {
		if _, err := d.Client.Tag(ctx, client.TagRequest{Path: p, Task: "task of " + p, RelatedApps: []string{"notes"}}); err != nil {
			t.Fatal(err)
		}
	}
	before, err := d.Client.Query(ctx, client.QueryRequest{Text: "task"})
	if err != nil || len(before) != 5 {
		t.Fatalf("before restart: %v %v", paths(before), err)
	}
	d.Restart()
	ctx = d.Context()
	after, err := d.Client.Query(ctx, client.QueryRequest{Text: "task"})
	if err != nil || fmt.Sprint(paths(after)) != fmt.Sprint(paths(before)) {
		t.Fatalf("after restart: %v %v; want %v", paths(after), err, paths(before))
	}
	d.Stop()
	// Behind the daemon's back: a rename (same inode), a directory rename, a
	// delete, an edit and a new file.
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Rename(filepath.Join(data, "move-me.md"), filepath.Join(data, "moved.md")))
	must(os.Rename(filepath.Join(data, "dir"), filepath.Join(data, "dir2")))
	must(os.Remove(filepath.Join(data, "delete-me.md")))
	// The reconcile takes an edit for one when the file's mtime is after the
	// record's updatedAt. The file system's clock may tick coarsely (a
	// jiffy) and lag the daemon's: write until the mtime is past it, rather
	// than sleep for what a tick might be.
	editedBefore, _ := findPath(before, "edit-me.md")
	edit := filepath.Join(data, "edit-me.md")
	servertest.WaitFor(t, "the edit's mtime to pass the record's updatedAt", func() bool {
		must(os.WriteFile(edit, []byte("edited, longer"), 0o644))
		fi, err := os.Stat(edit)
		must(err)
		return fi.ModTime().After(editedBefore.UpdatedAt)
	})
	must(os.WriteFile(filepath.Join(data, "new.md"), []byte("n"), 0o644))
	d.Restart()
	ctx = d.Context()
	// stderr is copied on its own goroutine: give the line a moment to arrive.
	if !d.WaitLog("index reconciled", semfstest.WaitBound) {
		t.Errorf("the daemon did not report its reconcile:\n%s", d.Log())
	}
	check := func(p, task string) {
		t.Helper()
		rec, err := d.Client.File(ctx, p)
		if err != nil || rec.Task != task {
			t.Errorf("%s: %+v %v; want task %q", p, rec, err, task)
		}
	}
	check("keep.md", "task of keep.md")
	check("moved.md", "task of move-me.md")
	check("dir2/inner.md", "task of dir/inner.md")
	check("edit-me.md", "task of edit-me.md")
	check("new.md", "")
	for _, gone := range []string{"move-me.md", "delete-me.md", "dir/inner.md"} {
		if _, err := d.Client.File(ctx, gone); err == nil {
			t.Errorf("%s still has a record", gone)
		}
	}
	if rec, err := d.Client.File(ctx, "edit-me.md"); err == nil && !rec.UpdatedAt.After(editedBefore.UpdatedAt) {
		t.Errorf("edited file's updatedAt did not move: %v -> %v", editedBefore.UpdatedAt, rec.UpdatedAt)
	}
}

func findPath(res []client.Result, p string) (client.Result, bool) {
	for _, r := range res {
		if r.Path == p {
			return r, true
		}
	}
	return client.Result{}, false
}

func TestKeywordOnlyWithoutModel(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	writeFiles(t, data, map[string]string{"notes/login.md": "x", "other.md": "y"})
	d := semfstest.Start(t, semfstest.Options{Data: data, ModelDir: filepath.Join(t.TempDir(), "no-model-here")})
	ctx := d.Context()
	if !d.WaitLog("keyword-only", semfstest.WaitBound) {
		t.Fatalf("the daemon did not log why search is keyword-only:\n%s", d.Log())
	}
	d.Client.Tag(ctx, client.TagRequest{Path: "notes/login.md", Task: "fix authentication bug"})
	res, err := d.Client.Query(ctx, client.QueryRequest{Text: "authentication"})
	if err != nil || len(res) != 1 || res[0].Path != "notes/login.md" {
		t.Fatalf("keyword query: %v %v", paths(res), err)
	}
	// Without a model nothing is found by meaning alone.
	res, err = d.Client.Query(ctx, client.QueryRequest{Text: "sign-in trouble"})
	if err != nil || len(res) != 0 {
		t.Fatalf("semantic query without a model: %v %v", paths(res), err)
	}
}

func TestSemanticRankingThroughDaemon(t *testing.T) {
	modelDir := embedtest.ModelDir(t)
	data := filepath.Join(t.TempDir(), "data")
	writeFiles(t, data, map[string]string{
		"notes/login.md":     "x",
		"notes/bug.md":       "x",
		"notes/pizza.md":     "x",
		"notes/problems.txt": "x",
	})
	d := semfstest.Start(t, semfstest.Options{Data: data, ModelDir: modelDir})
	ctx := d.Context()
	tags := map[string]string{
		"notes/login.md":     "fix login failure",
		"notes/bug.md":       "authentication bug",
		"notes/pizza.md":     "order pizza for the team dinner",
		"notes/problems.txt": "quarterly budget",
	}
	for p, task := range tags {
		if _, err := d.Client.Tag(ctx, client.TagRequest{Path: p, Task: task}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := d.Client.Query(ctx, client.QueryRequest{Text: "auth problems"})
	if err != nil {
		t.Fatal(err)
	}
	got := paths(res)
	t.Logf("auth problems -> %v", got)
	// "problems" is a keyword hit in notes/problems.txt's path and "auth" in
	// "authentication bug": keyword hits come first, then meaning.
	pos := map[string]int{}
	for i, p := range got {
		pos[p] = i
	}
	for _, p := range []string{"notes/login.md", "notes/bug.md", "notes/problems.txt"} {
		if _, ok := pos[p]; !ok {
			t.Fatalf("%s missing from %v", p, got)
		}
	}
	if _, ok := pos["notes/pizza.md"]; ok && pos["notes/pizza.md"] < pos["notes/login.md"] {
		t.Fatalf("pizza outranks login: %v", got)
	}
	for _, r := range res {
		hasKeyword := r.Score >= 1
		if !hasKeyword {
			for _, q := range res {
				if q.Score >= 1 && pos[q.Path] > pos[r.Path] {
					t.Fatalf("pure-semantic %s outranks keyword hit %s: %v", r.Path, q.Path, got)
				}
			}
		}
	}
	if pos["notes/login.md"] > pos["notes/pizza.md"] && pos["notes/pizza.md"] != 0 {
		t.Fatalf("meaning ranking wrong: %v", got)
	}
}

func TestClientSuppliedMiniLMVectors(t *testing.T) {
	ref := embedtest.LoadMiniLMRef(t)
	// Tag files with real MiniLM vectors of three subjects, two items each, and
	// query with a third item of the first subject.
	pick := []int{0, 1, 5, 6, 10, 11}
	query := ref.Items[2]
	data := filepath.Join(t.TempDir(), "data")
	files := map[string]string{}
	for _, i := range pick {
		files[fmt.Sprintf("docs/doc%02d.md", i)] = ref.Items[i].Text
	}
	writeFiles(t, data, files)
	d := semfstest.Start(t, semfstest.Options{Data: data, ModelDir: "off"})
	ctx := d.Context()
	for _, i := range pick {
		it := ref.Items[i]
		v := &client.Vector{Model: ref.Model, Values: it.Vector}
		if _, err := d.Client.Tag(ctx, client.TagRequest{Path: fmt.Sprintf("docs/doc%02d.md", i), Task: "reference item", Embedding: v}); err != nil {
			t.Fatal(err)
		}
	}
	// The seed's rule: score = similarity; best (below): the same order.
	res, err := d.Client.Query(ctx, client.QueryRequest{Text: "zzzzqqq", Embedding: &client.Vector{Model: ref.Model, Values: query.Vector}, Rank: client.RankSeed})
	if err != nil {
		t.Fatal(err)
	}
	type scored struct {
		path string
		sim  float64
	}
	var want []scored
	for _, i := range pick {
		if s := index.Similarity(query.Vector, ref.Items[i].Vector); s >= 0.2 {
			want = append(want, scored{fmt.Sprintf("docs/doc%02d.md", i), s})
		}
	}
	for i := 1; i < len(want); i++ {
		for j := i; j > 0 && want[j].sim > want[j-1].sim; j-- {
			want[j], want[j-1] = want[j-1], want[j]
		}
	}
	t.Logf("query %q (%s): want %v", query.Title, query.Group, want)
	if len(res) != len(want) || len(want) < 2 {
		t.Fatalf("got %v, want %v", paths(res), want)
	}
	for i := range want {
		if res[i].Path != want[i].path || abs(res[i].Score-want[i].sim) > 1e-4 {
			t.Fatalf("rank %d: got %s %.4f, want %s %.4f", i, res[i].Path, res[i].Score, want[i].path, want[i].sim)
		}
	}
	// The same subject ranks first.
	for _, r := range res[:2] {
		if r.Path != "docs/doc00.md" && r.Path != "docs/doc01.md" {
			t.Fatalf("top results %v are not the query's subject (%s)", paths(res), query.Group)
		}
	}
	// The default rank: every file at or above the threshold, in the same
	// order, with the same similarity (explain).
	res, err = d.Client.Query(ctx, client.QueryRequest{Text: "zzzzqqq", Embedding: &client.Vector{Model: ref.Model, Values: query.Vector}, Explain: true})
	if err != nil || len(res) < len(want) {
		t.Fatalf("best: %v %v", paths(res), err)
	}
	for i := range want {
		if e := res[i].Explain; res[i].Path != want[i].path || e == nil || e.Similarity == nil || abs(*e.Similarity-want[i].sim) > 1e-4 {
			t.Fatalf("best rank %d: got %s %+v, want %s %.4f", i, res[i].Path, res[i].Explain, want[i].path, want[i].sim)
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestTagManyIsAllOrNothing(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	writeFiles(t, data, map[string]string{"a.md": "a", "b.md": "b", "c.md": "c"})
	d := semfstest.Start(t, semfstest.Options{Data: data, ModelDir: "off"})
	ctx := d.Context()
	bad := []client.TagRequest{
		{Path: "a.md", Task: "first"},
		{Path: "b.md", Task: "second"},
		{Path: "missing.md", Task: "third"},
	}
	var ae *client.APIError
	if _, err := d.Client.TagMany(ctx, bad); !errors.As(err, &ae) || ae.Status != 404 || !strings.Contains(ae.Message, "tags[2]") {
		t.Fatalf("batch with a missing file: %v", err)
	}
	if rec, _ := d.Client.File(ctx, "a.md"); rec.Task != "" {
		t.Fatalf("a failed batch changed a.md: %+v", rec)
	}
	recs, err := d.Client.TagMany(ctx, bad[:2])
	if err != nil || len(recs) != 2 || recs[0].Task != "first" || recs[1].Path != "b.md" {
		t.Fatalf("batch: %+v %v", recs, err)
	}
	status, eb, _ := rawRequest(t, d.Socket, "POST", "/v1/tags", "application/json", []byte(`{"tags":[]}`))
	if status != 400 || eb.Error.Code != control.CodeInvalid {
		t.Fatalf("empty batch: %d %+v", status, eb)
	}
}

// TestQueryRankModes: over the real control socket, "rank":"seed" answers the
// seed's rule (substring points), the default ("best", also when absent)
// analysed words with exact names first, "explain" says why, and an unknown
// rank is refused with 400 and changes nothing.
func TestQueryRankModes(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	writeFiles(t, data, map[string]string{
		"src/feature-flags.go":   "package flags",
		"notes/eat-out.md":       "tascas",
		"docs/deployment-101.md": "how to ship",
	})
	d := semfstest.Start(t, semfstest.Options{Data: data, ModelDir: "off"})
	ctx := d.Context()
	for p, task := range map[string]string{"src/feature-flags.go": "toggle rollouts", "notes/eat-out.md": "places for dinner", "docs/deployment-101.md": "release steps"} {
		if _, err := d.Client.Tag(ctx, client.TagRequest{Path: p, Task: task}); err != nil {
			t.Fatal(err)
		}
	}
	// "eat" is a substring of "feature": a seed point, never a best match.
	seed, err := d.Client.Query(ctx, client.QueryRequest{Text: "eat", Rank: client.RankSeed})
	if err != nil || len(seed) != 2 {
		t.Fatalf("seed eat = %v %v", paths(seed), err)
	}
	for _, rank := range []string{"", client.RankBest} {
		res, err := d.Client.Query(ctx, client.QueryRequest{Text: "eat", Rank: rank, Explain: true})
		if err != nil || len(res) != 1 || res[0].Path != "notes/eat-out.md" || res[0].Explain == nil ||
			res[0].Explain.Rank != client.RankBest || len(res[0].Explain.Words["path"]) != 1 {
			t.Fatalf("rank %q eat = %v %+v", rank, paths(res), err)
		}
	}
	// Stems: "deploying" finds the deployment guide in best, nothing in seed.
	if res, err := d.Client.Query(ctx, client.QueryRequest{Text: "deploying"}); err != nil || len(res) != 1 || res[0].Path != "docs/deployment-101.md" {
		t.Fatalf("best deploying = %v %v", paths(res), err)
	}
	if res, err := d.Client.Query(ctx, client.QueryRequest{Text: "deploying", Rank: client.RankSeed}); err != nil || len(res) != 0 {
		t.Fatalf("seed deploying = %v %v", paths(res), err)
	}
	var ae *client.APIError
	if _, err := d.Client.Query(ctx, client.QueryRequest{Text: "eat", Rank: "fancy"}); !errors.As(err, &ae) || ae.Code != client.CodeInvalid {
		t.Fatalf("unknown rank: %v", err)
	}
	// The CLI: --rank and --explain.
	if out, _, code := d.Run("query", "eat", "--rank", "seed"); code != 0 || !strings.Contains(out, "feature-flags.go") {
		t.Fatalf("semfs query --rank seed: code %d\n%s", code, out)
	}
	if out, _, code := d.Run("query", "eat", "--explain"); code != 0 || !strings.Contains(out, "notes/eat-out.md  [best] path: eat") || strings.Contains(out, "feature-flags") {
		t.Fatalf("semfs query --explain: code %d\n%s", code, out)
	}
	if _, _, code := d.Run("query", "eat", "--rank", "fancy"); code == 0 {
		t.Fatal("semfs query --rank fancy succeeded")
	}
}
