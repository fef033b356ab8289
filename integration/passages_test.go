package integration_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/embed/embedtest"
	"github.com/semfs/semfs/integration/semfstest"
)

// Meaning over contents (issue 25, item 4): an untagged file under a name
// that says nothing is found by what it says, with its passages' line
// numbers and text; scope tags and the seed rank never look at contents.

// contentsCorpus is a few untagged files whose names say nothing.
var contentsCorpus = map[string]string{
	"n/0001.txt": "# Garden\n\nWater the tomatoes every morning in July.\nThe basil needs less sun than the peppers.\n",
	"n/0002.txt": "Meeting notes\n\nThe quarterly budget review moved to Thursday.\nFinance wants the spreadsheet by noon.\n",
	"n/0003.txt": "Recipe\n\nWhisk two eggs with sugar, fold in flour, bake for forty minutes.\n",
	"n/0004.txt": "Travel\n\nThe train to the coast leaves at seven; bring the tickets and a raincoat.\n",
}

// webhookTrace is the file written over NFS: a long run of health checks,
// then the paragraph a query about a payment timeout must find, which starts
// at line webhookLine (a passage of its own).
var webhookTrace = "request log\n\n" + strings.Repeat("2026-11-30 10:00:01 GET /health 200\n", 50) +
	"\n" + "checkout service\n" + "the payment webhook from the card processor timed out after 30 seconds; the order stayed pending\n"

const webhookLine = 54

func queryAPI(t *testing.T, c *client.Client, req client.QueryRequest) []client.Result {
	t.Helper()
	res, err := c.Query(context.Background(), req)
	if err != nil {
		t.Fatalf("query %+v: %v", req, err)
	}
	return res
}

func resultPaths(res []client.Result) []string {
	out := make([]string, len(res))
	for i, r := range res {
		out[i] = r.Path
	}
	return out
}

// waitFound polls the query until want is among its results, for at most
// bound from start; the answer found.
func waitFound(t *testing.T, c *client.Client, req client.QueryRequest, want string, start time.Time, bound time.Duration) client.Result {
	t.Helper()
	for {
		for _, r := range queryAPI(t, c, req) {
			if r.Path == want {
				t.Logf("%q found %s after %v", req.Text, want, time.Since(start).Round(time.Millisecond))
				return r
			}
		}
		if time.Since(start) > bound {
			h, _ := c.Health(context.Background())
			t.Fatalf("%q did not find %s within %v (passages: %+v)", req.Text, want, bound, h.Passages)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestContentsFindsAFileWrittenOverNFS(t *testing.T) {
	model := embedtest.ModelDir(t)
	data := filepath.Join(t.TempDir(), "data")
	writeFiles(t, data, contentsCorpus)
	d := semfstest.Start(t, semfstest.Options{Data: data, NineP: "off", ModelDir: model})
	c := d.Client
	waitPassagesSettled(t, d, len(contentsCorpus))

	// Written through a real NFS client (go-nfs-client over TCP), untagged,
	// under a name that says nothing.
	v := d.MountNFS(t, "/@agent", 0)
	if _, err := v.Mkdir("logs", 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := v.OpenFile("logs/0042.txt", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(webhookTrace)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	written := time.Now()
	// By meaning: no word of the query is in the file.
	r := waitFound(t, c, client.QueryRequest{Text: "charge callback stalled", Limit: 3}, "logs/0042.txt", written, 2*time.Second)
	if len(r.Passages) == 0 {
		t.Fatalf("no passages: %+v", r)
	}
	// By words: its best passage is the webhook paragraph, with its line
	// number and text as on disk.
	r = waitFound(t, c, client.QueryRequest{Text: "payment webhook timed out", Limit: 3}, "logs/0042.txt", written, 2*time.Second)
	lines := strings.Split(webhookTrace, "\n")
	p := r.Passages[0]
	if want := strings.Join(lines[webhookLine-1:webhookLine+1], "\n"); p.Line != webhookLine || p.Text != want || p.Score <= 0 {
		t.Fatalf("best passage %+v, want line %d: %q", p, webhookLine, want)
	}
	if res := queryAPI(t, c, client.QueryRequest{Text: "payment webhook timed out", Limit: 3}); res[0].Path != "logs/0042.txt" {
		t.Fatalf("by words, first: %v", resultPaths(res))
	}
	// scope tags and the seed rank never look at contents.
	for _, req := range []client.QueryRequest{
		{Text: "payment webhook timed out", Scope: client.ScopeTags},
		{Text: "payment webhook timed out", Rank: client.RankSeed},
	} {
		for _, r := range queryAPI(t, c, req) {
			if len(r.Passages) > 0 || r.Path == "logs/0042.txt" {
				t.Fatalf("%+v answered from contents: %+v", req, r)
			}
		}
	}
	var e *client.APIError
	if _, err := c.Query(context.Background(), client.QueryRequest{Text: "x", Scope: "everything"}); !errors.As(err, &e) || e.Code != client.CodeInvalid {
		t.Fatalf("scope everything: %v", err)
	}
	// An exact name still ranks above what matches by meaning alone (the
	// seed's promise, docs/query.md).
	if res := queryAPI(t, c, client.QueryRequest{Text: "0001 charge callback stalled", Limit: 3}); len(res) < 2 || res[0].Path != "n/0001.txt" || !slices.Contains(resultPaths(res), "logs/0042.txt") {
		t.Fatalf("name, then meaning: %v", resultPaths(res))
	}

	// Removed: gone from the answers; rewritten: the new text is found.
	if err := v.Remove("logs/0042.txt"); err != nil {
		t.Fatal(err)
	}
	if err := nfsWriteWhole(v, "n/0003.txt", []byte("Recipe\n\nKnead the dough for the sourdough bread, then let it rise overnight.\n")); err != nil {
		t.Fatal(err)
	}
	waitFound(t, c, client.QueryRequest{Text: "sourdough dough rise", Limit: 3}, "n/0003.txt", time.Now(), 10*time.Second)
	for _, r := range queryAPI(t, c, client.QueryRequest{Text: "payment webhook timed out"}) {
		if r.Path == "logs/0042.txt" {
			t.Fatalf("a removed file is still answered: %+v", r)
		}
	}

	// A restart keeps the vectors: nothing is embedded again.
	d.Stop()
	d.Restart()
	h := waitPassagesSettled(t, d, len(contentsCorpus))
	if h.Passages.Damaged != "" {
		t.Fatalf("after restart: %+v", h.Passages)
	}
	if !strings.Contains(metricsText(t, c), fmt.Sprintf("semfs_passage_files %d\n", len(contentsCorpus))) {
		t.Fatalf("metrics lack the passage files")
	}
	// Damaged: set aside, rebuilt from the files.
	d.Stop()
	if err := os.WriteFile(filepath.Join(d.Index, "passages.gob"), []byte("not an index"), 0o600); err != nil {
		t.Fatal(err)
	}
	d.Restart()
	waitPassagesSettled(t, d, len(contentsCorpus))
	waitFound(t, c, client.QueryRequest{Text: "sourdough dough rise", Limit: 3}, "n/0003.txt", time.Now(), 10*time.Second)
}

// A daemon running as root answers passages as its caller: a file the caller
// may not read gives no evidence and no text.
func TestContentsOnlyWhatTheCallerMayRead(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root: the daemon acts as its callers only when it runs as root")
	}
	sockDir, err := os.MkdirTemp("", "semfs-passages-views-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	os.Chmod(sockDir, 0o755)
	data := filepath.Join(t.TempDir(), "data")
	writeFiles(t, data, map[string]string{
		"public.txt": "the lighthouse keeper logs every passing ship\n",
		"secret.txt": "the lighthouse keeper hides the smuggled ship\n",
	})
	os.Chmod(filepath.Join(data, "secret.txt"), 0o600)
	d := semfstest.Start(t, semfstest.Options{Data: data, ModelDir: "off", NineP: "off", Socket: filepath.Join(sockDir, "s.sock")})
	waitPassagesSettled(t, d, 2)
	os.Chmod(d.Socket, 0o666)
	for dir := filepath.Dir(data); dir != "/" && dir != os.TempDir(); dir = filepath.Dir(dir) {
		os.Chmod(dir, 0o755)
	}
	if got := resultPaths(queryAPI(t, d.Client, client.QueryRequest{Text: "lighthouse keeper ship"})); !slices.Equal(got, []string{"public.txt", "secret.txt"}) && !slices.Equal(got, []string{"secret.txt", "public.txt"}) {
		t.Fatalf("root: %v", got)
	}
	bin, err := os.ReadFile(semfstest.Binary(t))
	if err != nil {
		t.Fatal(err)
	}
	cli := filepath.Join(sockDir, "semfs")
	if err := os.WriteFile(cli, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cli, "query", "--json", "lighthouse", "keeper", "ship")
	cmd.Env = append(os.Environ(), "BERTH_SEMANTIC_FS_SOCKET="+d.Socket)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("semfs query as nobody: %v\n%s", err, out)
	}
	var resp client.QueryResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got := resultPaths(resp.Results); !slices.Equal(got, []string{"public.txt"}) || resp.Results[0].Passages[0].Text != "the lighthouse keeper logs every passing ship" {
		t.Fatalf("nobody sees %+v", resp.Results)
	}
	// .semfs/query answers as the caller too, passages included.
	for _, who := range []struct {
		uid  uint32
		want []string
	}{{65534, []string{"public.txt"}}, {0, []string{"public.txt", "secret.txt"}}} {
		b := nfsRead(t, d.MountNFS(t, "/", who.uid), ".semfs/query/lighthouse keeper ship/.results.json")
		var qr client.QueryResponse
		if err := json.Unmarshal(b, &qr); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		got := resultPaths(qr.Results)
		slices.Sort(got)
		if !slices.Equal(got, who.want) || len(qr.Results[0].Passages) == 0 {
			t.Fatalf(".semfs/query as uid %d over NFS: %s", who.uid, b)
		}
	}
}

// waitPassagesSettled waits until the passage index holds n files and has
// nothing pending (vectors included).
func waitPassagesSettled(t *testing.T, d *semfstest.Daemon, n int) client.Health {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		h, err := d.Client.Health(context.Background())
		if err == nil && h.Passages != nil && h.Passages.Pending == 0 && h.Passages.Files == n {
			return h
		}
		if time.Now().After(deadline) {
			t.Fatalf("passage index did not settle at %d files: %+v %v", n, h.Passages, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func metricsText(t *testing.T, c *client.Client) string {
	t.Helper()
	body, err := c.Get(context.Background(), "/v1/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Passages do not push queries out of the model's cache: a query an agent
// repeats is embedded once, before and after the passage index embedded more
// passages than the cache holds (they went through the queries' cache, so a
// burst of written files made every repeated query pay a forward pass
// again). semfs_embedded_texts_total counts the model's forward passes, not
// cache hits.
func TestPassagesKeepTheQueryCache(t *testing.T) {
	model := embedtest.ModelDir(t)
	data := filepath.Join(t.TempDir(), "data")
	writeFiles(t, data, contentsCorpus)
	d := semfstest.Start(t, semfstest.Options{Data: data, NineP: "off", ModelDir: model, Args: []string{"--passage-cpu", "1"}})
	c := d.Client
	waitPassagesSettled(t, d, len(contentsCorpus))
	embedded := func() float64 {
		t.Helper()
		body, err := c.Get(context.Background(), "/v1/metrics")
		n, ok := value(scrape(t, body, err), "semfs_embedded_texts_total", nil)
		if !ok {
			t.Fatal("no semfs_embedded_texts_total")
		}
		return n
	}
	q := client.QueryRequest{Text: "watering the tomatoes in summer", Limit: 5}
	before := embedded()
	queryAPI(t, c, q)
	once := embedded()
	if once != before+1 {
		t.Fatalf("a new query: %v texts embedded, want 1", once-before)
	}
	queryAPI(t, c, q)
	if n := embedded(); n != once {
		t.Fatalf("the same query again: %v texts embedded, want 0 (a cache hit)", n-once)
	}

	// More passages than the cache's 1,024 entries, each its own text, as a
	// host writes them.
	const files = 1100
	more := map[string]string{}
	for i := range files {
		more[fmt.Sprintf("burst/%04d.txt", i)] = fmt.Sprintf("log line %d: sensor %d reported %d degrees at station %d\n", i, i*7, i%40, i*13)
	}
	writeFiles(t, data, more)
	waitPassagesSettled(t, d, len(contentsCorpus)+files)
	settled := embedded()
	if settled < once+files {
		t.Fatalf("the burst's passages: %v texts embedded, want at least %d", settled-once, files)
	}
	queryAPI(t, c, q)
	if n := embedded(); n != settled {
		t.Fatalf("the query after the burst: %v texts embedded, want 0 (still in the cache)", n-settled)
	}
}
