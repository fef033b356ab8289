// Command semfs is the semfs daemon and its command-line client.
//
// Exit codes: 0 success; 1 nothing found (a query with no match, an unknown
// file); 2 usage error; 3 the daemon could not be reached; 4 the daemon refused
// the request (4xx); 5 the daemon or the local operation failed.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/semfs/semfs/client"
)

const (
	exitOK          = 0
	exitNotFound    = 1
	exitUsage       = 2
	exitUnreachable = 3
	exitRefused     = 4
	exitFailed      = 5
	exitReset       = 6 // semfs changes: the cursor is no longer in the daemon's history
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *cliEnv, args []string) int
}

// cliEnv is what every subcommand writes to; tests swap it.
type cliEnv struct {
	stdout, stderr io.Writer
}

func commands() []command {
	return []command{
		{"serve", "run the daemon (NFSv3, 9P2000.L and the control socket)", runServe},
		{"register", "bind an app name to your uid", runRegister},
		{"tag", "set a file's task and related apps", runTag},
		{"query", "find files by meaning and keywords", runQuery},
		{"grep", "find lines in the export's files (GNU grep's output and exit codes)", runGrep},
		{"get", "show one file's record", runGet},
		{"status", "show the daemon's state", runStatus},
		{"changes", "print what changed since a cursor (--follow: as it happens)", runChanges},
		{"snapshot", "write an archive of the backing directory and index", runSnapshot},
		{"restore", "unpack a snapshot into an empty location", runRestore},
		{"policy", "check a --policy file, or explain what an app may do to a path", runPolicy},
		{"version", "print the version", func(_ context.Context, env *cliEnv, _ []string) int { fmt.Fprintln(env.stdout, version); return 0 }},
	}
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: semfs COMMAND [flags] [args]\n\ncommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun `semfs COMMAND -h` for a command's flags.\n")
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	release := processTuning(os.Args[1:])
	code := run(ctx, &cliEnv{stdout: os.Stdout, stderr: os.Stderr}, os.Args[1:])
	release()
	stop()
	os.Exit(code)
}

// run is the whole command line (args without the program name) and returns
// the exit code; main only adds the process around it, so tests run it as is.
func run(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) < 1 {
		usage(env.stderr)
		return exitUsage
	}
	name := args[0]
	if name == "-h" || name == "--help" || name == "help" {
		usage(env.stdout)
		return exitOK
	}
	for _, c := range commands() {
		if c.name == name {
			return c.run(ctx, env, args[1:])
		}
	}
	fmt.Fprintf(env.stderr, "semfs: unknown command %q\n", name)
	usage(env.stderr)
	return exitUsage
}

// exitFor turns a client error into a message and an exit code.
func exitFor(env *cliEnv, err error) int {
	fmt.Fprintf(env.stderr, "semfs: %v\n", err)
	var ue *client.UnreachableError
	var ae *client.APIError
	switch {
	case errors.As(err, &ue):
		return exitUnreachable
	case errors.As(err, &ae) && ae.Status == http.StatusNotFound:
		return exitNotFound
	case errors.As(err, &ae) && ae.Status < 500:
		return exitRefused
	}
	return exitFailed
}
