package integration_test

// A battery of hostile local clients against the real daemon binary, one case per
// defect issue 11 found: lengths from the wire that made the daemon allocate
// gigabytes, connections left in CLOSE-WAIT after malformed streams, peers that
// stall or dribble, and more connections than the daemon will serve. Each case
// ends by checking that the daemon is alive, answers, and holds no more
// descriptors than before: a leak or a crash in any door fails here, whatever
// the door's own unit tests say.

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs/integration/semfstest"
)

// procFDs counts the daemon's open descriptors.
func procFDs(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatalf("reading the daemon's descriptors: %v", err)
	}
	return len(ents)
}

// procRSS is the daemon's resident set, in bytes.
func procRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc status")
	return 0
}

// settle waits until the daemon holds at most want descriptors. The bound is
// only there to fail a test that would otherwise hang; a healthy daemon closes a
// hung-up connection as soon as it reads the EOF.
func settle(t *testing.T, d *semfstest.Daemon, want int, what string) {
	t.Helper()
	d.WaitFor(t, fmt.Sprintf("%s: the daemon's descriptors back to %d (else connections leaked)", what, want), func() error {
		if got := procFDs(t, d.PID()); got > want {
			return fmt.Errorf("the daemon holds %d descriptors", got)
		}
		return nil
	})
}

// healthy fails unless the daemon process runs and its control socket answers.
func healthy(t *testing.T, d *semfstest.Daemon) {
	t.Helper()
	if !d.Alive() {
		t.Fatalf("the daemon died\n%s", d.Log())
	}
	if _, err := d.Client.Health(d.Context()); err != nil {
		t.Fatalf("the daemon does not answer its control socket: %v\n%s", err, d.Log())
	}
}

// rpcCall is an ONC RPC call record (AUTH_NULL) with args, record mark included.
func rpcCall(xid, prog, vers, proc uint32, args []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0) // the mark, set below
	for _, v := range []uint32{xid, 0, 2, prog, vers, proc, 0, 0, 0, 0} {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	b = append(b, args...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4)|1<<31)
	return b
}

// readReply reads one reply record, or reports the connection closed (nil, nil).
func readReply(c net.Conn) ([]byte, error) {
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	var mark [4]byte
	if _, err := io.ReadFull(c, mark[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err) {
			return nil, nil
		}
		return nil, err
	}
	n := binary.BigEndian.Uint32(mark[:]) &^ (1 << 31)
	if n > 1<<20 {
		return nil, fmt.Errorf("a %d-byte reply to a malformed call", n)
	}
	rec := make([]byte, n)
	_, err := io.ReadFull(c, rec)
	return rec, err
}

func isReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}

func TestHostileNFSLengthsAllocateNothing(t *testing.T) {
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off", NineP: "off"})
	healthy(t, d)
	before := procRSS(t, d.PID())
	// The 84-byte call of the report: a file handle whose length says 0xfffffff0,
	// for every NFSv3 procedure that takes a handle first, and MOUNT's MNT with a
	// dirpath of that length.
	huge := binary.BigEndian.AppendUint32(nil, 0xfffffff0)
	huge = append(huge, make([]byte, 36)...)
	type call struct {
		name             string
		prog, vers, proc uint32
	}
	var calls []call
	for proc := uint32(1); proc <= 21; proc++ {
		calls = append(calls, call{fmt.Sprintf("NFSPROC3 %d", proc), 100003, 3, proc})
	}
	calls = append(calls, call{"MOUNTPROC3_MNT", 100005, 3, 1}, call{"MOUNTPROC3_UMNT", 100005, 3, 3})
	for i, cl := range calls {
		c, err := net.Dial("tcp", d.NFS)
		if err != nil {
			t.Fatalf("%s: %v\n%s", cl.name, err, d.Log())
		}
		rec := rpcCall(uint32(1000+i), cl.prog, cl.vers, cl.proc, huge)
		if len(rec) != 84 {
			t.Fatalf("the call is %d bytes, not the report's 84", len(rec))
		}
		if _, err := c.Write(rec); err != nil {
			t.Fatal(err)
		}
		reply, err := readReply(c)
		c.Close()
		if err != nil {
			t.Fatalf("%s: %v\n%s", cl.name, err, d.Log())
		}
		// A reply must refuse the call: an accepted reply whose accept_stat is
		// SUCCESS would mean the absurd length was believed. Closing is fine too.
		if len(reply) >= 24 && binary.BigEndian.Uint32(reply) == uint32(1000+i) &&
			binary.BigEndian.Uint32(reply[8:]) == 0 && binary.BigEndian.Uint32(reply[20:]) == 0 {
			if len(reply) >= 28 && binary.BigEndian.Uint32(reply[24:]) == 0 {
				t.Errorf("%s: a handle of 0xfffffff0 bytes was answered NFS3_OK", cl.name)
			}
		}
		healthy(t, d)
	}
	if after := procRSS(t, d.PID()); after-before > 256<<20 {
		t.Fatalf("the daemon's resident memory grew from %d to %d MiB on %d malformed calls", before>>20, after>>20, len(calls))
	}
}

// hangUps are byte streams a broken or hostile client sends before it hangs up.
func hangUps(door string) map[string][]byte {
	rnd := make([]byte, 512)
	rand.Read(rnd)
	switch door {
	case "nfs":
		getattr := rpcCall(7, 100003, 3, 1, append(binary.BigEndian.AppendUint32(nil, 32), make([]byte, 32)...))
		return map[string][]byte{
			// A record mark without the last-fragment bit, then a fragment of a call.
			"fragment": append(binary.BigEndian.AppendUint32(nil, uint32(len(getattr)-4)), getattr[4:20]...),
			// A mark promising more than comes.
			"truncated": getattr[:30],
			"random":    rnd,
			// A whole mark, then random bytes as the record.
			"random record": append(binary.BigEndian.AppendUint32(nil, 200|1<<31), rnd[:200]...),
		}
	case "9p":
		tversion := func(size uint32) []byte {
			b := binary.LittleEndian.AppendUint32(nil, size)
			b = append(b, 100)                              // Tversion
			b = binary.LittleEndian.AppendUint16(b, 0xffff) // NOTAG
			b = binary.LittleEndian.AppendUint32(b, 65536)  // msize
			b = binary.LittleEndian.AppendUint16(b, 8)
			return append(b, "9P2000.L"...)
		}
		good := tversion(4 + 1 + 2 + 4 + 2 + 8)
		return map[string][]byte{
			"huge size":   tversion(0xfffffff0),
			"truncated":   good[:10],
			"random":      rnd,
			"then random": append(append([]byte{}, good...), rnd...),
		}
	default: // the control socket
		return map[string][]byte{
			"header cut":  []byte("POST /v1/query HTTP/1.1\r\nHost: semfs\r\nContent-Le"),
			"body cut":    []byte("POST /v1/query HTTP/1.1\r\nHost: semfs\r\nContent-Length: 100\r\n\r\n{\"text\":"),
			"random":      rnd,
			"huge length": []byte("POST /v1/tag HTTP/1.1\r\nHost: semfs\r\nContent-Length: 99999999999\r\n\r\n{"),
		}
	}
}

func dialDoor(t *testing.T, d *semfstest.Daemon, door string) net.Conn {
	t.Helper()
	var c net.Conn
	var err error
	switch door {
	case "nfs":
		c, err = net.Dial("tcp", d.NFS)
	case "9p":
		c, err = net.Dial("tcp", d.NineP)
	default:
		c, err = net.Dial("unix", d.Socket)
	}
	if err != nil {
		t.Fatalf("dialling %s: %v\n%s", door, err, d.Log())
	}
	return c
}

func TestHostileHangUpsLeaveNoConnection(t *testing.T) {
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off"})
	healthy(t, d)
	base := procFDs(t, d.PID())
	for _, door := range []string{"nfs", "9p", "control"} {
		for name, stream := range hangUps(door) {
			// Ten of each, so a leak is ten descriptors, not one a slow close hides.
			for i := 0; i < 10; i++ {
				c := dialDoor(t, d, door)
				c.Write(stream)
				// Half of them wait for the daemon to answer or give up first.
				if i%2 == 0 {
					c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
					io.Copy(io.Discard, c)
				}
				c.Close()
			}
			settle(t, d, base, door+" "+name)
			healthy(t, d)
		}
	}
}

// closedWithin reports whether the daemon closed c within bound while the client
// went on sending one byte every tick (or nothing, with tick 0).
func closedWithin(c net.Conn, bound, tick time.Duration, drip []byte) bool {
	deadline := time.Now().Add(bound)
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		c.SetReadDeadline(deadline)
		r := bufio.NewReader(c)
		for {
			if _, err := r.ReadByte(); err != nil {
				return
			}
		}
	}()
	for i := 0; time.Now().Before(deadline); i++ {
		select {
		case <-closed:
			return time.Now().Before(deadline)
		case <-time.After(tick): // the drip's pace is what is tested
		}
		if len(drip) > 0 {
			if _, err := c.Write(drip[i%len(drip) : i%len(drip)+1]); err != nil {
				<-closed
				return true
			}
		}
	}
	<-closed
	return false
}

func TestHostileStallsAreCutOff(t *testing.T) {
	// Short limits, so the test needs seconds; the bounds below are generous
	// multiples, only there to fail instead of hanging.
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off",
		Args: []string{"--body-timeout", "1s", "--idle-timeout", "2s"}})
	healthy(t, d)
	base := procFDs(t, d.PID())
	const bound = 30 * time.Second
	drips := map[string][]byte{
		"nfs":     rpcCall(9, 100003, 3, 0, nil),
		"9p":      hangUps("9p")["then random"][:21],
		"control": []byte("POST /v1/query HTTP/1.1\r\nHost: semfs\r\nContent-Length: 5000\r\n\r\n" + strings.Repeat(" ", 5000)),
	}
	for _, door := range []string{"nfs", "9p", "control"} {
		// A request dribbled a byte at a time never completes in the body timeout.
		c := dialDoor(t, d, door)
		if !closedWithin(c, bound, 300*time.Millisecond, drips[door]) {
			t.Errorf("%s: a request dribbled a byte every 300 ms held its connection for %v", door, bound)
		}
		c.Close()
		// A connection that never says anything is closed after the idle timeout
		// (9P: it has not attached, so it holds no mount).
		c = dialDoor(t, d, door)
		if !closedWithin(c, bound, 100*time.Millisecond, nil) {
			t.Errorf("%s: a silent connection was held for %v", door, bound)
		}
		c.Close()
		settle(t, d, base, door+" stalls")
		healthy(t, d)
	}
}

func TestHostileConnectionCap(t *testing.T) {
	const max = 6
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off", Args: []string{"--max-conns", strconv.Itoa(max)}})
	healthy(t, d)
	for _, door := range []string{"nfs", "9p"} {
		var held []net.Conn
		for i := 0; i < max; i++ {
			held = append(held, dialDoor(t, d, door))
		}
		// One over the cap is accepted and closed at once.
		extra := dialDoor(t, d, door)
		if !closedWithin(extra, 30*time.Second, 100*time.Millisecond, nil) {
			t.Errorf("%s: connection %d of a cap of %d was kept open", door, max+1, max)
		}
		extra.Close()
		// Those within the cap still work: a NULL call over NFS, a Tversion over 9P.
		probe := held[0]
		switch door {
		case "nfs":
			probe.Write(rpcCall(11, 100003, 3, 0, nil))
			if rep, err := readReply(probe); err != nil || len(rep) < 24 {
				t.Errorf("nfs: a connection within the cap got no NULL reply (%v)", err)
			}
		case "9p":
			probe.Write(hangUps("9p")["then random"][:21])
			probe.SetReadDeadline(time.Now().Add(20 * time.Second))
			var hdr [7]byte
			if _, err := io.ReadFull(probe, hdr[:]); err != nil || hdr[4] != 101 {
				t.Errorf("9p: a connection within the cap got no Rversion (%v, type %d)", err, hdr[4])
			}
		}
		for _, c := range held {
			c.Close()
		}
		// Once they are gone, the door serves again.
		d.WaitFor(t, door+": the door to serve again after the held connections closed", func() error {
			c := dialDoor(t, d, door)
			defer c.Close()
			c.SetReadDeadline(time.Now().Add(2 * time.Second))
			if door == "nfs" {
				c.Write(rpcCall(12, 100003, 3, 0, nil))
				if rep, err := readReply(c); err != nil || len(rep) < 24 {
					return fmt.Errorf("NULL call: %d bytes, %v", len(rep), err)
				}
				return nil
			}
			c.Write(hangUps("9p")["then random"][:21])
			var hdr [7]byte
			if _, err := io.ReadFull(c, hdr[:]); err != nil || hdr[4] != 101 {
				return fmt.Errorf("Tversion: type %d, %v", hdr[4], err)
			}
			return nil
		})
	}
	healthy(t, d)
}
