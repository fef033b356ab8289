// Command semfs-guest is the harness's helper inside the QEMU guest, for the
// few things busybox cannot do exactly: an O_EXCL create that reports the
// server's answer, deterministic data the host can recompute, and a process
// that holds one file descriptor open across daemon restarts while the host
// tells it (through FIFOs) when to write and fsync.
//
//	semfs-guest excl PATH              create with O_CREAT|O_EXCL; exit 0, or 17 on EEXIST
//	semfs-guest pattern SEED SIZE      write kernel.Pattern(SEED, SIZE) to stdout
//	semfs-guest pipesize FIFO BYTES    grow a FIFO's pipe buffer (F_SETPIPE_SZ); it
//	                                   lasts while any process keeps the FIFO open
//	semfs-guest runas UID GID CMD...   exec CMD with that uid/gid and no groups
//	                                   (busybox's setpriv cannot change uids)
//	semfs-guest getfattr PATH NAME     print the extended attribute NAME of PATH
//	                                   (exit 1 and the errno's text on failure)
//	semfs-guest setfattr PATH NAME VALUE
//	                                   set it (busybox 1.35 has neither attr tool)
//	semfs-guest hold PATH CMDFIFO ACKFIFO
//	    open PATH (O_WRONLY|O_CREAT|O_TRUNC) once, then for each line of CMDFIFO:
//	      "write SEED SIZE"  write the pattern at the current offset
//	      "fsync"            fsync the held descriptor
//	      "close"            close it and exit
//	    and answer one line on ACKFIFO: "ok <cmd>" or "err <cmd>: <error>"
//	semfs-guest locks PATH_A PATH_B    fcntl and flock locks across two mounts of
//	                                   one file (locks.go)
//	semfs-guest time OUT ERR CMD...    run CMD with stdout to OUT and stderr to ERR
//	                                   and print "@@TIME <ns> <exit status>": its wall
//	                                   time from just before exec to its exit (busybox
//	                                   has no clock finer than 10 ms; kernel.GrepScript)
//
// It is built by the test (CGO_ENABLED=0, static) and shipped in the per-boot
// initramfs overlay as /semfs/guest.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/semfs/semfs/integration/kernel"
)

func main() {
	if len(os.Args) < 2 {
		fatal(2, "usage: semfs-guest excl|pattern|hold ...")
	}
	switch a := os.Args[2:]; os.Args[1] {
	case "excl":
		if len(a) != 1 {
			fatal(2, "usage: semfs-guest excl PATH")
		}
		f, err := os.OpenFile(a[0], os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, syscall.EEXIST) {
			fatal(17, "excl %s: EEXIST", a[0])
		}
		if err != nil {
			fatal(1, "excl: %v", err)
		}
		if err := f.Close(); err != nil {
			fatal(1, "excl: close: %v", err)
		}
	case "pattern":
		if len(a) != 2 {
			fatal(2, "usage: semfs-guest pattern SEED SIZE")
		}
		n, err := strconv.Atoi(a[1])
		if err != nil || n < 0 {
			fatal(2, "pattern: bad size %q", a[1])
		}
		if _, err := os.Stdout.Write(kernel.Pattern(a[0], n)); err != nil {
			fatal(1, "pattern: %v", err)
		}
	case "pipesize":
		if len(a) != 2 {
			fatal(2, "usage: semfs-guest pipesize FIFO BYTES")
		}
		n, err := strconv.Atoi(a[1])
		if err != nil || n <= 0 {
			fatal(2, "pipesize: bad size %q", a[1])
		}
		f, err := os.OpenFile(a[0], os.O_RDWR, 0)
		if err != nil {
			fatal(1, "pipesize: %v", err)
		}
		got, err := unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, n)
		if err != nil {
			fatal(1, "pipesize %s %d: %v", a[0], n, err)
		}
		fmt.Println(got)
	case "runas":
		if len(a) < 3 {
			fatal(2, "usage: semfs-guest runas UID GID CMD...")
		}
		uid, err1 := strconv.Atoi(a[0])
		gid, err2 := strconv.Atoi(a[1])
		if err1 != nil || err2 != nil {
			fatal(2, "runas: bad uid/gid %q %q", a[0], a[1])
		}
		path, err := exec.LookPath(a[2])
		if err != nil {
			fatal(1, "runas: %v", err)
		}
		// Order matters: groups and gid first, while still root.
		if err := syscall.Setgroups(nil); err != nil {
			fatal(1, "runas: setgroups: %v", err)
		}
		if err := syscall.Setgid(gid); err != nil {
			fatal(1, "runas: setgid: %v", err)
		}
		if err := syscall.Setuid(uid); err != nil {
			fatal(1, "runas: setuid: %v", err)
		}
		if err := syscall.Exec(path, a[2:], os.Environ()); err != nil {
			fatal(1, "runas: exec %s: %v", path, err)
		}
	case "getfattr":
		if len(a) != 2 {
			fatal(2, "usage: semfs-guest getfattr PATH NAME")
		}
		buf := make([]byte, 64<<10)
		n, err := unix.Getxattr(a[0], a[1], buf)
		if err != nil {
			fatal(1, "getfattr %s %s: %v", a[0], a[1], err)
		}
		fmt.Printf("%s\n", buf[:n])
	case "setfattr":
		if len(a) != 3 {
			fatal(2, "usage: semfs-guest setfattr PATH NAME VALUE")
		}
		if err := unix.Setxattr(a[0], a[1], []byte(a[2]), 0); err != nil {
			fatal(1, "setfattr %s %s: %v", a[0], a[1], err)
		}
	case "hold":
		if len(a) != 3 {
			fatal(2, "usage: semfs-guest hold PATH CMDFIFO ACKFIFO")
		}
		hold(a[0], a[1], a[2])
	case "locks":
		if len(a) != 2 {
			fatal(2, "usage: semfs-guest locks PATH_A PATH_B")
		}
		locks(a[0], a[1])
	case "time":
		if len(a) < 3 {
			fatal(2, "usage: semfs-guest time OUT ERR CMD...")
		}
		timed(a[0], a[1], a[2:])
	default:
		fatal(2, "unknown command %q", os.Args[1])
	}
}

func timed(outPath, errPath string, argv []string) {
	out, err := os.Create(outPath)
	if err != nil {
		fatal(1, "time: %v", err)
	}
	defer out.Close()
	errf, err := os.Create(errPath)
	if err != nil {
		fatal(1, "time: %v", err)
	}
	defer errf.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = out, errf
	t0 := time.Now()
	err = cmd.Run()
	d := time.Since(t0)
	st := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		st = ee.ExitCode()
	case err != nil:
		fatal(1, "time: %v", err)
	}
	fmt.Printf("@@TIME %d %d\n", d.Nanoseconds(), st)
}

func hold(path, cmdFIFO, ackFIFO string) {
	// O_RDWR on both FIFOs: neither side ever sees EOF when the other end
	// is briefly closed between steps, and neither open blocks.
	cmds, err := os.OpenFile(cmdFIFO, os.O_RDWR, 0)
	if err != nil {
		fatal(1, "hold: %v", err)
	}
	ack, err := os.OpenFile(ackFIFO, os.O_RDWR, 0)
	if err != nil {
		fatal(1, "hold: %v", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		fmt.Fprintf(ack, "err open: %v\n", err)
		os.Exit(1)
	}
	fmt.Fprintf(ack, "ok open %s\n", path)
	sc := bufio.NewScanner(cmds)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		w := strings.Fields(line)
		var err error
		switch {
		case len(w) == 3 && w[0] == "write":
			n, perr := strconv.Atoi(w[2])
			if perr != nil {
				err = perr
				break
			}
			_, err = f.Write(kernel.Pattern(w[1], n))
		case len(w) == 1 && w[0] == "fsync":
			err = f.Sync()
		case len(w) == 1 && w[0] == "close":
			err = f.Close()
			answer(ack, line, err)
			return
		default:
			err = fmt.Errorf("unknown command")
		}
		answer(ack, line, err)
	}
}

func answer(ack *os.File, line string, err error) {
	if err != nil {
		fmt.Fprintf(ack, "err %s: %v\n", line, err)
		return
	}
	fmt.Fprintf(ack, "ok %s\n", line)
}

func fatal(code int, format string, a ...any) {
	fmt.Fprintf(os.Stderr, "semfs-guest: "+format+"\n", a...)
	os.Exit(code)
}
