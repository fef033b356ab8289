package ninep

import "time"

// NoFastPath makes s answer every request through p9, for connections it
// accepts from now on: the reference the fast path's replies are held to.
func NoFastPath(s *Server) { s.noFast = true }

// FastAnswered is how many requests s's fast path has answered.
func FastAnswered(s *Server) uint64 { return s.answered.Load() }

// Flushes is how many Tflushes s has read and handed to p9.
func Flushes(s *Server) uint64 { return s.flushes.Load() }

// Conns is how many connections s is serving.
func Conns(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// ShortMakeWait makes s give up waiting for an unanswered fid-making request
// after d instead of makeWait, for fuzzing (an input that reuses a tag in
// flight would otherwise take makeWait).
func ShortMakeWait(s *Server, d time.Duration) { s.makeWait.Store(int64(d)) }

// ShortOwnWait makes s end a connection whose shim's own request p9 leaves
// unanswered after d instead of ownWait (as an input reusing a tag in flight
// can make it).
func ShortOwnWait(s *Server, d time.Duration) { s.ownWait.Store(int64(d)) }

// SeedStreams and Prologue are the fuzz targets' starting streams and the
// Tversion+Tattach every input follows (fuzz_decoder_test.go).
func SeedStreams() [][]byte { return fuzzSeeds() }
func Prologue() []byte      { return fuzzPrologue() }

const StreamMsize = fuzzMsize
