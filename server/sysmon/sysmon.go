//go:build linux

// Package sysmon keeps the Go runtime's monitor thread (sysmon) out of its
// 20 µs polling while the daemon serves a steady stream of requests, by
// holding one scheduler P with a goroutine parked in a raw system call.
//
// Why: sysmon sleeps for good ("deep sleep") whenever every P is idle, and
// the next system call made the usual way (entersyscall: an openat, an fsync,
// a write to the index) wakes it with its polling period reset to 20 µs. It
// then wakes every 20 µs until it again finds every P idle. A file server
// alternates between the two all the time: each NFS create (CREATE, WRITE,
// COMMIT with its fsync) woke it and kept it polling through the fsync, a
// context switch every 20 µs on the cores the client and the serving thread
// need. Measured on a 2-vCPU VM (integration/bench/nfs/ab.sh, same-run A/B,
// 7 rounds; docs/benchmarks-history.md, "The runtime's monitor"): 2,000 NFS creates took
// 0.87× the wall time and 0.77× the daemon's CPU with the hold, the median
// GETATTR latency went from 66 to 26 µs; perf had shown 14 % of the daemon's
// CPU in sysmon alone (1.4 % with the hold).
//
// How: while the process is busy (its CPU time over the last Window is at
// least Busy of one CPU), a goroutine waits in ppoll made as a raw system call,
// which keeps its P in the running state: no P set is ever all idle, so sysmon
// never deep-sleeps, is never woken by a system call, and backs its period off
// to 10 ms as it does for any busy program. GOMAXPROCS is raised by one for
// that P, so the daemon keeps as many for work as it had. Once the process has
// been quiet for Linger, the goroutine parks the usual way (time.Sleep) and
// the runtime behaves as without the hold: an idle daemon does not keep
// sysmon awake.
//
// Safety: a goroutine in a raw system call cannot stop for the garbage
// collector's stop-the-world by itself. The runtime asks a running P to stop
// with a signal (SIGURG, asynchronous preemption); ppoll returns EINTR on any
// signal (it is never restarted), and the hold then yields at once
// (runtime.Gosched), so a stop-the-world waits microseconds, not the ppoll
// timeout. With asynchronous preemption turned off (GODEBUG=asyncpreemptoff=1)
// there is no such signal, so Start does nothing. The ppoll also returns at
// each Window, to measure the load, and at once when Stop writes to its
// eventfd.
//
// Cost: calling runtime.GOMAXPROCS turns off the runtime's own updates of
// GOMAXPROCS to the container's CPU limit (Go 1.25+), so the limit seen at
// start is kept. This is a bet on how today's Go runtime schedules sysmon; if
// a later runtime changes it, the hold only costs its goroutine's wake-ups.
package sysmon

import (
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Options tune a Hold; zero values take the defaults.
type Options struct {
	// Busy is the share of one CPU the process must have used over a Window for
	// the hold to engage (default 0.05).
	Busy float64
	// Window is how often the process's CPU time is sampled (default 100 ms).
	Window time.Duration
	// Linger is how long the hold stays engaged after the last busy Window
	// (default 1 s): a client's pauses between bursts do not release it.
	Linger time.Duration
	// Idle is how long the process must have been quiet before the load is
	// sampled once a second instead of once a Window (default 10 s), so that
	// an idle daemon wakes once a second for it.
	Idle time.Duration
}

// idleSample is how often an idle process's CPU time is sampled.
const idleSample = time.Second

// Hold is a started hold on one P; Stop ends it.
type Hold struct {
	opt     Options
	procs   int // GOMAXPROCS before Start
	efd     int // eventfd: Stop's wake-up for the engaged ppoll
	quit    chan struct{}
	done    chan struct{}
	stopped atomic.Bool

	engaged    atomic.Bool
	engagedN   atomic.Uint64 // times the hold engaged
	interrupts atomic.Uint64 // engaged ppolls ended by a signal (EINTR)
}

// Start raises GOMAXPROCS by one and starts the hold's goroutine. It returns
// nil, changing nothing, where the hold cannot be safe or cannot work: with
// GODEBUG=asyncpreemptoff=1, or when the eventfd cannot be made.
func Start(opt Options) *Hold { return start(opt, false) }

// start is Start; held: engage at once, without waiting for a busy Window
// (tests).
func start(opt Options, held bool) *Hold {
	if asyncPreemptOff(os.Getenv("GODEBUG")) {
		return nil
	}
	if opt.Busy <= 0 {
		opt.Busy = 0.05
	}
	if opt.Window <= 0 {
		opt.Window = 100 * time.Millisecond
	}
	if opt.Linger <= 0 {
		opt.Linger = time.Second
	}
	if opt.Idle <= 0 {
		opt.Idle = 10 * time.Second
	}
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil
	}
	h := &Hold{opt: opt, efd: efd, quit: make(chan struct{}), done: make(chan struct{})}
	h.procs = runtime.GOMAXPROCS(0)
	runtime.GOMAXPROCS(h.procs + 1)
	go h.run(held)
	return h
}

// Stop ends the hold, waits for its goroutine and gives GOMAXPROCS back. It is
// safe to call on nil and more than once.
func (h *Hold) Stop() {
	if h == nil {
		return
	}
	if !h.stopped.CompareAndSwap(false, true) {
		return
	}
	close(h.quit)
	one := uint64(1)
	unix.Write(h.efd, (*[8]byte)(unsafe.Pointer(&one))[:])
	<-h.done
	unix.Close(h.efd)
	runtime.GOMAXPROCS(h.procs)
}

// Engaged reports whether the hold holds its P now.
func (h *Hold) Engaged() bool { return h != nil && h.engaged.Load() }

// run is the hold's goroutine; held: engage at once (tests), without a busy
// Window first.
func (h *Hold) run(held bool) {
	defer close(h.done)
	t := time.NewTimer(h.opt.Window)
	defer t.Stop()
	last, lastAt, quietSince := processCPU(), time.Now(), time.Now()
	for {
		busy := held
		held = false
		if !busy {
			select {
			case <-h.quit:
				return
			case <-t.C:
			}
			now, at := processCPU(), time.Now()
			busy = h.busyOver(now-last, at.Sub(lastAt))
			last, lastAt = now, at
		}
		if busy {
			h.hold()
			if h.stopped.Load() {
				return
			}
			last, lastAt, quietSince = processCPU(), time.Now(), time.Now()
		}
		next := h.opt.Window
		if time.Since(quietSince) >= h.opt.Idle {
			next = idleSample
		}
		t.Reset(next)
	}
}

// hold keeps the P until the process has been quiet for Linger or Stop is
// called.
func (h *Hold) hold() {
	h.engaged.Store(true)
	h.engagedN.Add(1)
	defer h.engaged.Store(false)
	fds := []unix.PollFd{{Fd: int32(h.efd), Events: unix.POLLIN}}
	lastBusy := time.Now()
	windowStart, cpuStart := lastBusy, processCPU()
	for !h.stopped.Load() {
		wait := h.opt.Window - time.Since(windowStart)
		if wait > 0 {
			if rawPpoll(fds, wait) == unix.EINTR {
				h.interrupts.Add(1)
			}
		}
		// The safe point a stop-the-world (or sysmon's preemption of a P held
		// for 10 ms) waits for, reached as soon as its signal ended the ppoll.
		runtime.Gosched()
		now := time.Now()
		if now.Sub(windowStart) < h.opt.Window {
			continue
		}
		cpu := processCPU()
		if h.busyOver(cpu-cpuStart, now.Sub(windowStart)) {
			lastBusy = now
		} else if now.Sub(lastBusy) >= h.opt.Linger {
			return
		}
		windowStart, cpuStart = now, cpu
	}
}

// busyOver says whether cpu, the process's CPU time over the wall time took,
// is at least Busy of one CPU.
func (h *Hold) busyOver(cpu, took time.Duration) bool {
	return took > 0 && float64(cpu) >= h.opt.Busy*float64(took)
}

// rawPpoll waits in ppoll for at most d without entering the scheduler's
// system call state: the P stays in use. It returns the call's errno (EINTR
// when a signal ended it), 0 otherwise.
func rawPpoll(fds []unix.PollFd, d time.Duration) unix.Errno {
	ts := unix.NsecToTimespec(int64(d))
	_, _, e := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), uintptr(len(fds)),
		uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	return e
}

// processCPU is the process's CPU time (user and system, all threads), read
// with a raw system call so that reading it while idle does not wake sysmon.
func processCPU() time.Duration {
	var ts unix.Timespec
	unix.RawSyscall(unix.SYS_CLOCK_GETTIME, unix.CLOCK_PROCESS_CPUTIME_ID, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

// asyncPreemptOff reports whether godebug (GODEBUG's value) turns off
// asynchronous preemption; the last setting of a name wins, as in the runtime.
func asyncPreemptOff(godebug string) bool {
	off := false
	for _, kv := range strings.Split(godebug, ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k == "asyncpreemptoff" {
			off = v == "1"
		}
	}
	return off
}
