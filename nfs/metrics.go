package nfs

// OpenConns is how many client connections are being served, for metrics.
// Safe for concurrent use.
func (s *Server) OpenConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}
