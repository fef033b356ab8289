package nfs

import "github.com/semfs/semfs/server"

// ToNFS exposes the Kind mapping to the external tests.
func ToNFS(k server.Kind) (errno uint32, status uint32) {
	e, s := toNFS(k)
	return uint32(e), s
}

// SetPanic makes the billy or handler operation op panic ("" to stop), to prove
// that panics are contained.
func (s *Server) SetPanic(op string) { s.panicOp.Store(op) }
