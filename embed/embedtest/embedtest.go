// Package embedtest gives tests in other packages the real models and
// reference data of package embed: the USE-lite model directory (skipped when
// absent, failed when SEMFS_REQUIRE_MODEL=1) and 30 real all-MiniLM-L6-v2
// vectors with their texts.
package embedtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/semfs/semfs/embed"
)

// RequireModelEnv, set to 1 (as CI does), turns a missing model into a test
// failure instead of a skip, so a broken set-up cannot pass silently.
const RequireModelEnv = "SEMFS_REQUIRE_MODEL"

// embedDir is the source directory of package embed, found from this file's
// own path so tests of any package (whose working directory is their own
// package) find the same files.
func embedDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "embed"
	}
	return filepath.Dir(filepath.Dir(file))
}

// ModelDir returns the USE-lite model directory: $SEMFS_MODEL_DIR if set,
// else embed/model/dist of this source tree (where `bash embed/model/fetch.sh`
// puts it). If it holds no model.json the test is skipped with the command to
// fetch it, or fails when SEMFS_REQUIRE_MODEL=1.
func ModelDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(embed.ModelDirEnv)
	if dir == "" {
		dir = filepath.Join(embedDir(), "model", "dist")
	}
	if _, err := os.Stat(filepath.Join(dir, "model.json")); err != nil {
		msg := "USE-lite model not found in " + dir + " (run: bash embed/model/fetch.sh)"
		if os.Getenv(RequireModelEnv) == "1" {
			t.Fatal(msg + "; " + RequireModelEnv + "=1 requires it")
		}
		t.Skip(msg)
	}
	return dir
}

// USELite loads the in-process model from ModelDir (skipping or failing as
// ModelDir does). Loading takes about half a second; share it across subtests.
func USELite(t testing.TB) embed.Embedder {
	t.Helper()
	e, err := embed.LoadUSELite(ModelDir(t))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// MiniLMItem is one record of npm @sap-ux/fiori-docs-embeddings 1.2.6: a
// documentation chunk and the all-MiniLM-L6-v2 vector computed from it.
// Items of the same Group are about one subject (e.g. "deploy", "chart").
type MiniLMItem struct {
	ID     string    `json:"id"`
	Group  string    `json:"group"`
	Title  string    `json:"title"`
	Text   string    `json:"text"`
	Vector []float32 `json:"vector"`
}

// MiniLMRef is embed/testdata/minilm_ref.json (re-derive it with
// `node embed/testdata/mkminilm.mjs`).
type MiniLMRef struct {
	Model string       `json:"model"` // "all-MiniLM-L6-v2", equal to embed.MiniLM.Name
	Items []MiniLMItem `json:"items"` // 6 groups × 5 items, 384 d, L2-normalised
}

// LoadMiniLMRef reads the committed MiniLM reference vectors. It needs no
// model and never skips.
func LoadMiniLMRef(t testing.TB) MiniLMRef {
	t.Helper()
	path := filepath.Join(embedDir(), "testdata", "minilm_ref.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r MiniLMRef
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if r.Model != embed.MiniLM.Name || len(r.Items) == 0 {
		t.Fatalf("%s: model %q with %d items", path, r.Model, len(r.Items))
	}
	for _, it := range r.Items {
		if len(it.Vector) != embed.MiniLM.Dims {
			t.Fatalf("%s: item %s has %d dims", path, it.ID, len(it.Vector))
		}
	}
	return r
}

// USERef is embed/testdata/ref_use.json: token ids and vectors produced by
// USE-lite's own TF.js runtime (re-derive with embed/testdata/jsref/mkref.mjs).
type USERef struct {
	Runtime   string      `json:"runtime"`
	Sentences []string    `json:"sentences"`
	IDs       [][]int     `json:"ids"`
	Emb       [][]float32 `json:"emb"`
}

// LoadUSERef reads the committed USE-lite reference vectors.
func LoadUSERef(t testing.TB) USERef {
	t.Helper()
	path := filepath.Join(embedDir(), "testdata", "ref_use.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r USERef
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(r.Sentences) == 0 || len(r.IDs) != len(r.Sentences) || len(r.Emb) != len(r.Sentences) {
		t.Fatalf("%s: %d sentences, %d id lists, %d vectors", path, len(r.Sentences), len(r.IDs), len(r.Emb))
	}
	return r
}
