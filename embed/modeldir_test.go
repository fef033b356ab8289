package embed_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/semfs/semfs/embed"
)

// TestResolveModelDir walks the documented order: flag > env > working
// directory's embed/model/dist (only if it holds model.json) > default.
func TestResolveModelDir(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	t.Setenv(embed.ModelDirEnv, "")
	cwdModel := filepath.Join(wd, "embed", "model", "dist")

	// Nothing present: the working-directory candidate, marked as default.
	// (The test binary's directory has no model/ either.)
	if dir, src := embed.ResolveModelDir(""); dir != cwdModel || src != embed.ModelDirDefault {
		t.Fatalf("empty: %s (%s)", dir, src)
	}
	if err := os.MkdirAll(cwdModel, 0o755); err != nil {
		t.Fatal(err)
	}
	// A directory without model.json does not count.
	if _, src := embed.ResolveModelDir(""); src != embed.ModelDirDefault {
		t.Fatalf("dir without model.json chosen: %s", src)
	}
	if err := os.WriteFile(filepath.Join(cwdModel, "model.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if dir, src := embed.ResolveModelDir(""); dir != cwdModel || src != embed.ModelDirFromWorkingDir {
		t.Fatalf("cwd: %s (%s)", dir, src)
	}
	if embed.DefaultModelDir() != cwdModel {
		t.Fatalf("DefaultModelDir = %s", embed.DefaultModelDir())
	}
	// The env var wins over the working directory, even if it does not exist.
	t.Setenv(embed.ModelDirEnv, "/from/env")
	if dir, src := embed.ResolveModelDir(""); dir != "/from/env" || src != embed.ModelDirFromEnv {
		t.Fatalf("env: %s (%s)", dir, src)
	}
	// The flag wins over everything.
	if dir, src := embed.ResolveModelDir("/from/flag"); dir != "/from/flag" || src != embed.ModelDirFromFlag {
		t.Fatalf("flag: %s (%s)", dir, src)
	}
}
