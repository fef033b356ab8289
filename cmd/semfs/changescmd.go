package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/semfs/semfs/client"
)

// changesArgs are `semfs changes`'s flags.
type changesArgs struct {
	since   string // the cursor to read after; "" = print the current cursor only (or, with --follow, start now)
	follow  bool   // keep waiting for changes instead of exiting
	timeout time.Duration
}

// runChanges prints the changes after --since, one line each (`rev op app
// path`, a rename as `from -> path`), then the cursor to resume from on
// stderr ("cursor C"); with --json, one ChangesResponse object per page on
// stdout. A reset (the cursor is no longer in the daemon's history) is
// printed as "reset C" and exits 6 (with --follow it goes on from C).
func runChanges(ctx context.Context, env *cliEnv, args []string) int {
	var cf clientFlags
	var a changesArgs
	fs := newFlagSet(env, "changes", "[--since CURSOR] [--follow] [PATH-GLOB...]")
	cf.register(fs)
	fs.StringVar(&a.since, "since", "", "print the changes after this cursor (without it: print the current cursor, or with --follow start from now)")
	fs.BoolVar(&a.follow, "follow", false, "keep waiting for changes (Ctrl-C to stop)")
	fs.DurationVar(&a.timeout, "poll", 30*time.Second, "with --follow: how long each long poll waits")
	globs, err := parseInterleaved(fs, args)
	if err != nil {
		return exitUsage
	}
	if a.timeout <= 0 {
		// A poll that does not wait asks again at once, in a busy loop.
		fmt.Fprintln(env.stderr, "semfs changes: --poll must be longer than 0")
		return exitUsage
	}
	cl := cf.client()
	cursor := a.since
	enc := json.NewEncoder(env.stdout)
	print := func(r client.ChangesResponse) {
		if cf.json {
			enc.Encode(r)
			return
		}
		for _, c := range r.Changes {
			app := c.App
			if app == "" {
				app = "-"
			}
			if c.From != "" {
				fmt.Fprintf(env.stdout, "%d %s %s %s -> %s\n", c.Rev, c.Op, app, c.From, c.Path)
			} else {
				fmt.Fprintf(env.stdout, "%d %s %s %s\n", c.Rev, c.Op, app, c.Path)
			}
		}
		if r.Reset {
			fmt.Fprintf(env.stderr, "reset %s\n", r.Cursor)
		}
	}
	if cursor == "" {
		r, err := cl.ChangesOnce(ctx, client.ChangesRequest{})
		if err != nil {
			return exitFor(env, err)
		}
		cursor = r.Cursor
		if !a.follow {
			if cf.json {
				enc.Encode(r)
			} else {
				fmt.Fprintf(env.stderr, "cursor %s\n", cursor)
			}
			return exitOK
		}
	}
	for {
		req := client.ChangesRequest{Since: cursor, Paths: globs}
		if a.follow {
			req.Timeout = a.timeout
		}
		r, err := cl.ChangesOnce(ctx, req)
		if err != nil {
			if ctx.Err() != nil {
				break // interrupted while following
			}
			return exitFor(env, err)
		}
		print(r)
		cursor = r.Cursor
		if r.Reset && !a.follow {
			return exitReset
		}
		if !r.More && !a.follow {
			break
		}
	}
	if !cf.json {
		fmt.Fprintf(env.stderr, "cursor %s\n", cursor)
	}
	return exitOK
}
