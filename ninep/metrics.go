package ninep

// OpenConns is how many client connections are being served, for metrics.
// Safe for concurrent use.
func (s *Server) OpenConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// FastPathGiveUps is how many connections the shim gave up following p9's
// fids on (see giving up, fidtable.go), for metrics: each is logged when it
// happens; from then on p9 answers that connection's reads, writes and stats.
// Safe for concurrent use.
func (s *Server) FastPathGiveUps() uint64 { return s.gaveUp.Load() }
