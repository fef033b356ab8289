//go:build !linux

package main

import (
	"context"
	"fmt"
	"runtime"
)

// The daemon needs Linux (openat2, statx, SO_PEERCRED, RWF_NOWAIT); on other
// systems semfs is a client of a daemon that runs elsewhere, e.g. in a Linux
// VM or container (docs/deployment.md).

func runServe(_ context.Context, env *cliEnv, _ []string) int {
	return notHere(env, "serve")
}

func runRestore(_ context.Context, env *cliEnv, _ []string) int {
	return notHere(env, "restore")
}

func notHere(env *cliEnv, cmd string) int {
	fmt.Fprintf(env.stderr, "semfs: %s is not supported on %s: the daemon runs on Linux (use a container or a Linux VM; the client commands work here)\n", cmd, runtime.GOOS)
	return exitFailed
}

// processTuning has nothing to tune where the daemon does not run.
func processTuning([]string) (release func()) { return func() {} }
