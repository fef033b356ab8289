//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/semfs/semfs/server/snapshot"
)

// runRestore unpacks an archive with the daemon's own index code, so it lives
// with serve on the platforms the daemon runs on (serve_other.go elsewhere).
func runRestore(ctx context.Context, env *cliEnv, args []string) int {
	var data, idx string
	fs := newFlagSet(env, "restore", "FILE [--data DIR] [--index DIR]")
	fs.StringVar(&data, "data", "", "backing directory to create (env "+envData+")")
	fs.StringVar(&idx, "index", "", "index directory to create (env "+envIndex+")")
	arg, ok := oneArg(fs, args)
	if !ok {
		return exitUsage
	}
	p := resolve(data, idx, "")
	if err := p.check(); err != nil {
		fmt.Fprintf(env.stderr, "semfs: %v\n", err)
		return exitUsage
	}
	f, err := os.Open(arg)
	if err != nil {
		fmt.Fprintf(env.stderr, "semfs: %v\n", err)
		return exitFailed
	}
	defer f.Close()
	var r io.Reader = f
	var bar *progress
	if isTerminal(os.Stderr) {
		if fi, err := f.Stat(); err == nil {
			bar = &progress{w: env.stderr, total: fi.Size(), start: time.Now()}
			r = io.TeeReader(f, bar)
		}
	}
	// The index is rebuilt from the archive's records; vectors are kept as
	// stored, so no model is needed to restore.
	err = snapshot.Restore(r, p.Data, p.Index, indexOptions(nil, nil, nil))
	if bar != nil {
		bar.done()
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "semfs: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(env.stdout, "restored into %s (index %s)\n", p.Data, p.Index)
	return exitOK
}
