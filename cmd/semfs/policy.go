package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/semfs/semfs/server/policy"
)

// policyArgs are `semfs policy`'s flags.
type policyArgs struct {
	file      string // explain: the policy file
	createdBy string // explain: the path's created_by, for "own"
	json      bool   // print the explanation as JSON
}

// runPolicy is `semfs policy check FILE` and `semfs policy explain [--policy
// FILE] APP PATH`. Both read the file as the daemon does (the same parser);
// an invalid file is exit 2 with its line and column. Without --policy,
// explain asks the running daemon which file it serves and who created PATH.
func runPolicy(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) == 0 || (args[0] != "check" && args[0] != "explain") {
		fmt.Fprintln(env.stderr, "usage: semfs policy check FILE\n       semfs policy explain [--policy FILE] [--created-by APP] [--json] APP PATH")
		return exitUsage
	}
	var a policyArgs
	fs := newFlagSet(env, "policy "+args[0], map[string]string{"check": "FILE", "explain": "[--policy FILE] [--created-by APP] [--json] APP PATH"}[args[0]])
	var cf clientFlags
	if args[0] == "explain" {
		fs.StringVar(&cf.socket, "socket", "", "control socket (env "+envSocket+"), asked without --policy")
		fs.StringVar(&a.file, "policy", "", "the policy file (default: the one the daemon serves)")
		fs.StringVar(&a.createdBy, "created-by", "", `the app that created PATH (decides "own" in write and tag)`)
		fs.BoolVar(&a.json, "json", false, "print JSON for scripts")
	}
	pos, err := parseInterleaved(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return exitUsage
	}
	if args[0] == "check" {
		if len(pos) != 1 {
			fs.Usage()
			return exitUsage
		}
		return policyCheck(env, pos[0])
	}
	if len(pos) != 2 {
		fs.Usage()
		return exitUsage
	}
	if a.file == "" {
		c := cf.client()
		h, err := c.Health(ctx)
		if err != nil {
			return exitFor(env, err)
		}
		if h.Policy == nil {
			fmt.Fprintln(env.stderr, "semfs: the daemon runs without --policy: every app may do everything (name a file with --policy)")
			return exitUsage
		}
		a.file = h.Policy.File
		if a.createdBy == "" {
			if rec, err := c.File(ctx, policy.Clean(pos[1])); err == nil {
				a.createdBy = rec.CreatedBy
			}
		}
	}
	p, err := policy.Load(a.file)
	if err != nil {
		fmt.Fprintf(env.stderr, "semfs: %v\n", err)
		return exitUsage
	}
	e := p.Explain(pos[0], pos[1], a.createdBy)
	if a.json {
		printJSON(env.stdout, e)
		return exitOK
	}
	fmt.Fprintf(env.stdout, "app %q, path /%s:\n", e.App, e.Path)
	for _, row := range []struct {
		what string
		d    policy.Decision
	}{{"see", e.See}, {"read", e.Read}, {"write", e.Write}, {"tag", e.Tag}} {
		verdict := "yes"
		if !row.d.Allowed {
			verdict = "no"
		}
		fmt.Fprintf(env.stdout, "  %-5s %-3s  %s\n", row.what, verdict, row.d.Rule)
	}
	if e.ReadOnly {
		fmt.Fprintln(env.stdout, "  (write is empty: the app's export is read-only, every change answers EROFS)")
	}
	return exitOK
}

// policyCheck validates FILE and prints each app's effective rules.
func policyCheck(env *cliEnv, file string) int {
	p, err := policy.Load(file)
	if err != nil {
		fmt.Fprintf(env.stderr, "semfs: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(env.stdout, "%s: valid\n\ndefault (every app not named below):\n%s", file, p.Default())
	for _, app := range p.Apps() {
		name := fmt.Sprintf("app %q", app)
		if app == "" {
			name = `app "" (unattributed callers)`
		}
		fmt.Fprintf(env.stdout, "\n%s:\n%s", name, p.For(app))
	}
	return exitOK
}
