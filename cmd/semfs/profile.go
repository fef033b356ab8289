//go:build linux

package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// envCPUProfile names a file the daemon writes a Go CPU profile to, from start
// to a clean stop: how the benchmarks see where the real daemon's time goes
// (integration/bench), without a flag users would meet in --help.
const envCPUProfile = "SEMFS_CPUPROFILE"

// startCPUProfile starts the profile envCPUProfile asks for, if any, and returns
// the function that ends it.
func startCPUProfile() (stop func(), err error) {
	p := os.Getenv(envCPUProfile)
	if p == "" {
		return func() {}, nil
	}
	f, err := os.Create(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", envCPUProfile, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", envCPUProfile, err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
