package ninep

// NoFastPath makes s answer every request through p9, for connections it
// accepts from now on: the reference the fast path's replies are held to.
func NoFastPath(s *Server) { s.noFast = true }

// FastAnswered is how many requests s's fast path has answered.
func FastAnswered(s *Server) uint64 { return s.answered.Load() }

// Conns is how many connections s is serving.
func Conns(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}
