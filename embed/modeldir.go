package embed

import (
	"os"
	"path/filepath"
)

// ModelDirEnv names the environment variable that points at the model
// directory when no flag does.
const ModelDirEnv = "SEMFS_MODEL_DIR"

// Where ResolveModelDir found the directory, for the daemon's log line.
const (
	ModelDirFromFlag       = "flag"
	ModelDirFromEnv        = "env " + ModelDirEnv
	ModelDirFromWorkingDir = "working directory"
	ModelDirFromExecutable = "next to the executable"
	ModelDirDefault        = "default (not found)"
)

// ResolveModelDir picks the USE-lite model directory, first match wins:
//
//  1. flagValue, if not empty (taken as given, even if it does not exist);
//  2. $SEMFS_MODEL_DIR, if set (likewise);
//  3. embed/model/dist under the working directory, if it holds model.json
//     (a checkout after `bash embed/model/fetch.sh`);
//  4. model/ next to the executable, if it holds model.json (an installed
//     binary shipped with its model).
//
// When nothing matches it returns the absolute form of candidate 3 with
// source ModelDirDefault, so that the load error names a useful path. The
// explicit choices (1, 2) are never second-guessed: a wrong flag must fail
// loudly rather than quietly load another model.
func ResolveModelDir(flagValue string) (dir, source string) {
	if flagValue != "" {
		return flagValue, ModelDirFromFlag
	}
	if env := os.Getenv(ModelDirEnv); env != "" {
		return env, ModelDirFromEnv
	}
	cwdDir := filepath.Join("embed", "model", "dist")
	if abs, err := filepath.Abs(cwdDir); err == nil {
		cwdDir = abs
	}
	if hasModel(cwdDir) {
		return cwdDir, ModelDirFromWorkingDir
	}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		if d := filepath.Join(filepath.Dir(exe), "model"); hasModel(d) {
			return d, ModelDirFromExecutable
		}
	}
	return cwdDir, ModelDirDefault
}

// DefaultModelDir is ResolveModelDir without a flag.
func DefaultModelDir() string {
	dir, _ := ResolveModelDir("")
	return dir
}

func hasModel(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, "model.json"))
	return err == nil && fi.Mode().IsRegular()
}
