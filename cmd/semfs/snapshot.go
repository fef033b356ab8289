package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

func runSnapshot(ctx context.Context, env *cliEnv, args []string) int {
	var cf clientFlags
	var quiet bool
	fs := newFlagSet(env, "snapshot", "FILE")
	cf.register(fs)
	fs.BoolVar(&quiet, "quiet", false, "no progress bar")
	dst, ok := oneArg(fs, args)
	if !ok {
		return exitUsage
	}
	body, size, err := cf.client().Snapshot(ctx)
	if err != nil {
		return exitFor(env, err)
	}
	defer body.Close()
	// Write beside the destination and rename, so FILE is either the whole
	// archive or untouched.
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".part-*")
	if err != nil {
		fmt.Fprintf(env.stderr, "semfs: %v\n", err)
		return exitFailed
	}
	defer os.Remove(tmp.Name())
	var r io.Reader = body
	var bar *progress
	if !quiet && isTerminal(os.Stderr) {
		bar = &progress{w: env.stderr, total: size, start: time.Now()}
		r = io.TeeReader(body, bar)
	}
	n, err := io.Copy(tmp, r)
	if bar != nil {
		bar.done()
	}
	if err == nil && size >= 0 && n != size {
		err = fmt.Errorf("archive ended after %d of %d bytes", n, size)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "semfs: snapshot: %v\n", err)
		return exitFailed
	}
	if cf.json {
		printJSON(env.stdout, map[string]any{"file": dst, "bytes": n})
	} else {
		fmt.Fprintf(env.stdout, "wrote %s (%s)\n", dst, humanBytes(n))
	}
	return exitOK
}

// isTerminal reports whether f is a character device: a terminal, in practice,
// for the progress bar's purpose (and portable, unlike a termios ioctl).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progress draws a one-line bar on a terminal.
type progress struct {
	w     io.Writer
	total int64
	n     int64
	start time.Time
	last  time.Time
}

func (p *progress) Write(b []byte) (int, error) {
	p.n += int64(len(b))
	if now := time.Now(); now.Sub(p.last) > 100*time.Millisecond {
		p.last = now
		p.draw()
	}
	return len(b), nil
}

func (p *progress) draw() {
	const width = 30
	if p.total > 0 {
		frac := float64(p.n) / float64(p.total)
		if frac > 1 {
			frac = 1
		}
		fill := int(frac * width)
		bar := make([]byte, width)
		for i := range bar {
			switch {
			case i < fill:
				bar[i] = '='
			case i == fill:
				bar[i] = '>'
			default:
				bar[i] = ' '
			}
		}
		fmt.Fprintf(p.w, "\r[%s] %3.0f%% %s / %s", bar, frac*100, humanBytes(p.n), humanBytes(p.total))
	} else {
		fmt.Fprintf(p.w, "\r%s", humanBytes(p.n))
	}
}

func (p *progress) done() {
	p.draw()
	fmt.Fprintf(p.w, " in %s\n", time.Since(p.start).Round(time.Millisecond))
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
