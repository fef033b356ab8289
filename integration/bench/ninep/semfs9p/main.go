// Command semfs9p serves a directory over 9P2000.L with semfs's core and ninep
// adapter, and nothing else (no index), for side-by-side benchmarks against diod.
//
//	semfs9p -dir DIR -addr 127.0.0.1:PORT [-socket PATH] [-cpuprofile FILE] [-memprofile FILE]
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"

	"github.com/semfs/semfs/ninep"
	"github.com/semfs/semfs/server"
)

func main() {
	dir := flag.String("dir", "", "backing directory")
	addr := flag.String("addr", "127.0.0.1:5640", "TCP address")
	sock := flag.String("socket", "", "also serve on this Unix socket")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile here until the server stops")
	memprofile := flag.String("memprofile", "", "write an allocation profile here when the server stops")
	flag.Parse()
	if *memprofile != "" {
		runtime.MemProfileRate = 4096
		defer func() {
			f, err := os.Create(*memprofile)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return
			}
			pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}()
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// The change stream goes nowhere: the benchmark measures the file server.
	sink := server.SinkFunc(func(context.Context, server.Change) error { return nil })
	fsys, err := server.New(*dir, server.Options{Sink: sink, Logger: log})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	srv := ninep.NewServer(fsys, ninep.Options{Logger: log})
	if *sock != "" {
		ul, err := net.Listen("unix", *sock)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		go srv.Serve(ul)
	}
	go func() {
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
		<-c
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	fsys.Close()
}
