package integration_test

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/integration/semfstest"
)

// strictRoundTrip decodes a real daemon answer into the client's type with
// unknown fields disallowed, encodes it again and compares the two as generic
// JSON: a field the daemon sends and the client drops, renames or retypes fails.
func strictRoundTrip[T any](t *testing.T, what string, body io.ReadCloser, err error) T {
	t.Helper()
	var v T
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	defer body.Close()
	raw, err := io.ReadAll(body)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: the client's %T does not decode the daemon's answer: %v\n%s", what, v, err, raw)
	}
	again, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	json.Unmarshal(raw, &want)
	json.Unmarshal(again, &got)
	if !reflect.DeepEqual(want, got) {
		t.Errorf("%s: %T loses or changes data\ndaemon: %s\nclient: %s", what, v, raw, again)
	}
	return v
}

// TestClientTypesDecodeDaemonAnswers drives every control route with the Go
// client and decodes each raw answer strictly into the client's types.
func TestClientTypesDecodeDaemonAnswers(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	writeFiles(t, data, map[string]string{"notes/a.md": "alpha", "notes/b.md": "beta"})
	d := semfstest.Start(t, semfstest.Options{Data: data, ModelDir: "off", NineP: "off"})
	ctx := d.Context()
	c := d.Client

	b, err := c.Post(ctx, "/v1/register", client.RegisterRequest{App: "notes"})
	reg := strictRoundTrip[client.RegisterResponse](t, "register", b, err)
	if reg.App != "notes" {
		t.Errorf("register = %+v", reg)
	}
	b, err = c.Post(ctx, "/v1/tag", client.TagRequest{Path: "notes/a.md", Task: "draft the alpha release", RelatedApps: []string{"editor"}})
	rec := strictRoundTrip[client.Record](t, "tag", b, err)
	if rec.Path != "notes/a.md" || rec.Task != "draft the alpha release" || rec.CreatedAt.IsZero() {
		t.Errorf("tag = %+v", rec)
	}
	b, err = c.Post(ctx, "/v1/tags", client.TagsRequest{Tags: []client.TagRequest{{Path: "notes/b.md", Task: "beta notes", RelatedApps: []string{}}}})
	tags := strictRoundTrip[client.TagsResponse](t, "tags", b, err)
	if len(tags.Records) != 1 || tags.Records[0].Path != "notes/b.md" {
		t.Errorf("tags = %+v", tags)
	}
	b, err = c.Post(ctx, "/v1/query", client.QueryRequest{Text: "alpha release"})
	q := strictRoundTrip[client.QueryResponse](t, "query", b, err)
	if len(q.Results) == 0 || q.Results[0].Path != "notes/a.md" || q.Results[0].Score <= 0 {
		t.Errorf("query = %+v", q)
	}
	b, err = c.Get(ctx, client.FilePath("/notes/a.md"))
	strictRoundTrip[client.Record](t, "files", b, err)
	b, err = c.Get(ctx, "/v1/health")
	h := strictRoundTrip[client.Health](t, "health", b, err)
	if h.Status != "ok" || h.Index.Records != 2 || h.Registered == nil {
		t.Errorf("health = %+v", h)
	}

	// The typed methods agree with the raw answers.
	if got, err := c.File(ctx, "notes/a.md"); err != nil || got.Task != rec.Task {
		t.Errorf("File = %+v, %v", got, err)
	}
	if got, err := c.Query(ctx, client.QueryRequest{Text: "beta", Limit: 1}); err != nil || len(got) != 1 || got[0].Path != "notes/b.md" {
		t.Errorf("Query = %+v, %v", got, err)
	}
	if got, err := c.Health(ctx); err != nil || got.Index.Tagged != 2 {
		t.Errorf("Health = %+v, %v", got, err)
	}

	// Errors come back typed, with the daemon's code.
	var ae *client.APIError
	if _, err := c.Tag(ctx, client.TagRequest{Path: "notes/missing.md", Task: "x"}); !errors.As(err, &ae) || ae.Code != client.CodeNotFound || ae.Status != 404 {
		t.Errorf("tag of a missing file: %v; want APIError not_found", err)
	}
	if _, err := c.Query(ctx, client.QueryRequest{Text: " "}); !errors.As(err, &ae) || ae.Code != client.CodeInvalid {
		t.Errorf("empty query: %v; want APIError invalid", err)
	}

	// Snapshot: the archive is a tar of exactly the announced size.
	body, size, err := c.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	arch, err := io.ReadAll(body)
	body.Close()
	if err != nil || int64(len(arch)) != size {
		t.Fatalf("snapshot: %d bytes of %d announced, %v", len(arch), size, err)
	}
	if _, err := tar.NewReader(bytes.NewReader(arch)).Next(); err != nil {
		t.Errorf("snapshot is not a tar archive: %v", err)
	}

	// A stopped daemon is an outage, not an empty answer.
	d.Stop()
	var ue *client.UnreachableError
	if _, err := c.Query(ctx, client.QueryRequest{Text: "alpha"}); !errors.As(err, &ue) {
		t.Errorf("query of a stopped daemon: %v; want UnreachableError", err)
	}
}
