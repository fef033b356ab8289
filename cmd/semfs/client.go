package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/semfs/semfs/client"
)

// clientFlags are the flags every client command takes.
type clientFlags struct {
	socket string // control socket; default from BERTH_SEMANTIC_FS_SOCKET or the default paths
	json   bool   // print the API's JSON unchanged
}

func (c *clientFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.socket, "socket", "", "control socket (env "+envSocket+")")
	fs.BoolVar(&c.json, "json", false, "print JSON for scripts")
}

func (c *clientFlags) client() *client.Client { return client.New(socketPath(c.socket)) }

// parseInterleaved parses flags that may come before, between or after
// positional arguments ("semfs tag notes/a.md --task T").
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// oneArg parses args and wants exactly one positional argument; otherwise it
// prints the usage (unless the flags already failed) and says no.
func oneArg(fs *flag.FlagSet, args []string) (string, bool) {
	pos, err := parseInterleaved(fs, args)
	if err != nil || len(pos) != 1 {
		if err == nil {
			fs.Usage()
		}
		return "", false
	}
	return pos[0], true
}

func newFlagSet(env *cliEnv, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.stderr, "usage: semfs %s %s\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

func printJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func printRecords(w io.Writer, recs []client.Result, withScore bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if withScore {
		fmt.Fprintln(tw, "SCORE\tPATH\tCREATED BY\tTASK\tRELATED APPS\tUPDATED")
	} else {
		fmt.Fprintln(tw, "PATH\tCREATED BY\tTASK\tRELATED APPS\tUPDATED")
	}
	for _, r := range recs {
		by := r.CreatedBy
		if by == "" {
			by = "-"
		}
		task := r.Task
		if task == "" {
			task = "-"
		}
		rel := strings.Join(r.RelatedApps, ",")
		if rel == "" {
			rel = "-"
		}
		upd := r.UpdatedAt.Local().Format(time.DateTime)
		if withScore {
			fmt.Fprintf(tw, "%.3f\t%s\t%s\t%s\t%s\t%s\n", r.Score, r.Path, by, oneLine(task), rel, upd)
		} else {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Path, by, oneLine(task), rel, upd)
		}
	}
	tw.Flush()
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}
