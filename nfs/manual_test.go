package nfs_test

import (
	"net"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/semfs/semfs/nfs"
	"github.com/semfs/semfs/server"
)

// TestManualServe serves SEMFS_NFS_SERVE=DIR,STATE,ADDR[,CPUPROFILE] until
// interrupted, for profiling with external clients. Skipped otherwise.
func TestManualServe(t *testing.T) {
	spec := os.Getenv("SEMFS_NFS_SERVE")
	if spec == "" {
		t.Skip("SEMFS_NFS_SERVE not set")
	}
	parts := strings.Split(spec, ",")
	fsys, err := server.New(parts[0], server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := nfs.NewServer(fsys, nfs.Options{StateDir: parts[1]})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", parts[2])
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) > 3 {
		f, _ := os.Create(parts[3])
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	go srv.Serve(ln)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt)
	<-ch
	srv.Close()
}
