package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/semfs/semfs/client"
)

func runRegister(ctx context.Context, env *cliEnv, args []string) int {
	var cf clientFlags
	fs := newFlagSet(env, "register", "APP")
	cf.register(fs)
	arg, ok := oneArg(fs, args)
	if !ok {
		return exitUsage
	}
	out, err := cf.client().Register(ctx, arg)
	if err != nil {
		return exitFor(env, err)
	}
	if cf.json {
		printJSON(env.stdout, out)
	} else {
		fmt.Fprintf(env.stdout, "uid %d is now app %q\n", out.UID, out.App)
	}
	return exitOK
}

func runTag(ctx context.Context, env *cliEnv, args []string) int {
	var cf clientFlags
	var task, related string
	fs := newFlagSet(env, "tag", "PATH [--task TEXT] [--related-apps a,b]   (replaces both: one left out is cleared)")
	cf.register(fs)
	fs.StringVar(&task, "task", "", "why the file exists")
	fs.StringVar(&related, "related-apps", "", "comma-separated apps the file matters to")
	arg, ok := oneArg(fs, args)
	if !ok {
		return exitUsage
	}
	named := false
	fs.Visit(func(f *flag.Flag) { named = named || f.Name == "task" || f.Name == "related-apps" })
	if !named {
		// A tag call replaces both fields: with neither named it would clear
		// both, which is never what "semfs tag PATH" was typed for.
		fmt.Fprintln(env.stderr, "semfs tag: give --task, --related-apps or both (a tag replaces both; to clear them, --task '')")
		return exitUsage
	}
	apps := []string{}
	for _, a := range strings.Split(related, ",") {
		if a = strings.TrimSpace(a); a != "" {
			apps = append(apps, a)
		}
	}
	rec, err := cf.client().Tag(ctx, client.TagRequest{Path: arg, Task: task, RelatedApps: apps})
	if err != nil {
		return exitFor(env, err)
	}
	if cf.json {
		printJSON(env.stdout, rec)
	} else {
		printRecords(env.stdout, []client.Result{{Record: rec}}, false)
	}
	return exitOK
}

func runQuery(ctx context.Context, env *cliEnv, args []string) int {
	var cf clientFlags
	var limit int
	var rank string
	var explain bool
	var scope string
	fs := newFlagSet(env, "query", "TEXT... [--limit N] [--rank best|seed] [--scope all|tags] [--explain]")
	cf.register(fs)
	fs.IntVar(&limit, "limit", 0, "return at most N results (0: all)")
	fs.StringVar(&rank, "rank", "", "ranking rule: best (default) or seed")
	fs.BoolVar(&explain, "explain", false, "say why each file matched (with --json: the explain field)")
	fs.StringVar(&scope, "scope", "", "what best ranks by: all (default: tags, names and contents) or tags")
	pos, err := parseInterleaved(fs, args)
	if err != nil || len(pos) == 0 || limit < 0 {
		if err == nil {
			fs.Usage()
		}
		return exitUsage
	}
	res, err := cf.client().Query(ctx, client.QueryRequest{Text: strings.Join(pos, " "), Limit: limit, Rank: rank, Explain: explain, Scope: scope})
	if err != nil {
		return exitFor(env, err)
	}
	if cf.json {
		printJSON(env.stdout, client.QueryResponse{Results: res})
	} else if len(res) > 0 {
		printRecords(env.stdout, res, true)
		printResultPassages(env.stdout, res)
		if explain {
			printExplain(env.stdout, res)
		}
	} else {
		fmt.Fprintln(env.stderr, "no matching files")
	}
	if len(res) == 0 {
		return exitNotFound
	}
	return exitOK
}

func runGet(ctx context.Context, env *cliEnv, args []string) int {
	var cf clientFlags
	fs := newFlagSet(env, "get", "PATH")
	cf.register(fs)
	arg, ok := oneArg(fs, args)
	if !ok {
		return exitUsage
	}
	rec, err := cf.client().File(ctx, arg)
	if err != nil {
		return exitFor(env, err)
	}
	if cf.json {
		printJSON(env.stdout, rec)
	} else {
		printRecords(env.stdout, []client.Result{{Record: rec}}, false)
	}
	return exitOK
}

func runStatus(ctx context.Context, env *cliEnv, args []string) int {
	var cf clientFlags
	fs := newFlagSet(env, "status", "")
	cf.register(fs)
	if _, err := parseInterleaved(fs, args); err != nil {
		return exitUsage
	}
	h, err := cf.client().Health(ctx)
	if err != nil {
		return exitFor(env, err)
	}
	if cf.json {
		printJSON(env.stdout, h)
		return exitOK
	}
	w := env.stdout
	fmt.Fprintf(w, "status:     %s (semfs %s, up since %s)\n", h.Status, h.Version, h.StartedAt.Local().Format("2006-01-02 15:04:05"))
	fmt.Fprintf(w, "data:       %s\n", h.DataDir)
	fmt.Fprintf(w, "index:      %s\n", h.IndexDir)
	fmt.Fprintf(w, "socket:     %s\n", h.Socket)
	keys := make([]string, 0, len(h.Listeners))
	for k := range h.Listeners {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "%-11s %s\n", k+":", h.Listeners[k])
	}
	printStats(w, h.Index)
	printContent(w, h.Content)
	printPassages(w, h.Passages)
	if len(h.Registered) > 0 {
		uids := make([]string, 0, len(h.Registered))
		for u := range h.Registered {
			uids = append(uids, u)
		}
		sort.Strings(uids)
		for _, u := range uids {
			fmt.Fprintf(w, "registered: uid %s = %s\n", u, h.Registered[u])
		}
	}
	if h.Watch != "" {
		fmt.Fprintf(w, "watch:      %s\n", h.Watch)
	}
	if h.LastReconcile != "" {
		fmt.Fprintf(w, "reconcile:  %s\n", h.LastReconcile)
	}
	if p := h.Policy; p != nil {
		fmt.Fprintf(w, "policy:     %s (loaded %s)\n", p.File, p.Loaded.Local().Format("2006-01-02 15:04:05"))
		if p.Error != "" {
			fmt.Fprintf(w, "policy:     the last reload failed, the policy loaded before stays: %s\n", p.Error)
		}
	}
	if c := h.Changes; c != nil {
		fmt.Fprintf(w, "changes:    %d events kept (of at most %d, for %s), cursor %s\n", c.Events, c.Keep, c.KeepFor, c.Cursor)
		if c.Fresh != "" {
			fmt.Fprintf(w, "            history began at this start: %s\n", c.Fresh)
		}
	}
	return exitOK
}

// printExplain prints, after the results table, why each file matched.
func printExplain(w io.Writer, res []client.Result) {
	fmt.Fprintln(w)
	for _, r := range res {
		e := r.Explain
		if e == nil {
			continue
		}
		var parts []string
		if len(e.Names) > 0 {
			parts = append(parts, "names: "+strings.Join(e.Names, ", "))
		}
		fields := make([]string, 0, len(e.Words))
		for f := range e.Words {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		for _, f := range fields {
			parts = append(parts, f+": "+strings.Join(e.Words[f], ", "))
		}
		parts = append(parts, fmt.Sprintf("keyword %.3f", e.Keyword))
		if e.Similarity != nil {
			parts = append(parts, fmt.Sprintf("similarity %.3f", *e.Similarity))
		}
		fmt.Fprintf(w, "%s  [%s] %s\n", r.Path, e.Rank, strings.Join(parts, "; "))
	}
}
