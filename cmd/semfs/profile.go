//go:build linux

package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
)

// envCPUProfile names a file the daemon writes a Go CPU profile to, from start
// to a clean stop: how the benchmarks see where the real daemon's time goes
// (integration/bench), without a flag users would meet in --help.
const envCPUProfile = "SEMFS_CPUPROFILE"

// envMemProfile names a file the daemon writes its allocation profile to at a
// clean stop (every allocation since start, sampled as the runtime does: `go
// tool pprof -sample_index=alloc_space`): where the garbage the collector's
// CPU goes to comes from.
const envMemProfile = "SEMFS_MEMPROFILE"

// startProfiles starts the profiles envCPUProfile and envMemProfile ask for,
// if any, and returns the function that ends them.
func startProfiles() (stop func(), err error) {
	stopCPU := func() {}
	if p := os.Getenv(envCPUProfile); p != "" {
		f, err := os.Create(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", envCPUProfile, err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", envCPUProfile, err)
		}
		stopCPU = func() { pprof.StopCPUProfile(); f.Close() }
	}
	mem := os.Getenv(envMemProfile)
	if mem == "" {
		return stopCPU, nil
	}
	// Created now, so that a path the daemon cannot write fails at start,
	// not silently at stop.
	f, err := os.Create(mem)
	if err != nil {
		stopCPU()
		return nil, fmt.Errorf("%s: %w", envMemProfile, err)
	}
	return func() {
		stopCPU()
		err := pprof.Lookup("allocs").WriteTo(f, 0)
		if err = errors.Join(err, f.Close()); err != nil {
			fmt.Fprintf(os.Stderr, "semfs serve: %s: %v\n", envMemProfile, err)
		}
	}, nil
}
