package nfs

import (
	"time"

	"github.com/semfs/semfs/server"
)

// ToNFS exposes the Kind mapping to the external tests.
func ToNFS(k server.Kind) (errno uint32, status uint32) {
	e, s := toNFS(k)
	return uint32(e), s
}

// SetPanic makes the billy or handler operation op panic ("" to stop), to prove
// that panics are contained.
func (s *Server) SetPanic(op string) { s.panicOp.Store(op) }

// SetHold makes every fast-path call of operation op call f first (READ only
// so far), to hold it while a test looks at what else the connection answers.
func (s *Server) SetHold(f func(op string)) { s.hold.Store(f) }

// WaitConns waits until the server has exactly n connections open or d has
// passed, and returns the count it saw last.
func (s *Server) WaitConns(n int, d time.Duration) int { return s.waitConns(n, d) }

func (s *Server) waitConns(n int, d time.Duration) int {
	timer := time.AfterFunc(d, func() {
		s.mu.Lock()
		s.connsChange.Broadcast()
		s.mu.Unlock()
	})
	defer timer.Stop()
	deadline := time.Now().Add(d)
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.conns) != n && time.Now().Before(deadline) {
		s.connsChange.Wait()
	}
	return len(s.conns)
}

// SequentialCalls is commitInline's threshold.
const SequentialCalls = sequentialCalls

// SendFileMin is sendFileMin, for tests of which READs go out by sendfile.
const SendFileMin = sendFileMin
