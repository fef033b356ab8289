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

// ShortMakeWait sets s's makeWait to d: on a connection whose tags were lost
// (tags.go), the shim gives up waiting for an unanswered fid-making request
// after d; on any other, it logs after d that it still waits. For tests and
// fuzzing (a malformed input loses the tags; one reusing a tag in flight
// would then take makeWait).
func ShortMakeWait(s *Server, d time.Duration) { s.makeWait.Store(int64(d)) }

// LoseTags makes the connections s accepts from now on start as if a
// malformed request had made them lose track of their tags (tags.go): their
// waits for fid-making requests are bounded, and the shim gives up.
func LoseTags(s *Server) { s.tagsLost.Store(true) }

// ShortOwnWait makes s end a connection whose shim's own request p9 leaves
// unanswered after d instead of ownWait (as an input reusing a tag in flight
// can make it).
func ShortOwnWait(s *Server, d time.Duration) { s.ownWait.Store(int64(d)) }

// SeedStreams and Prologue are the fuzz targets' starting streams and the
// Tversion+Tattach every input follows (fuzz_decoder_test.go).
func SeedStreams() [][]byte { return fuzzSeeds() }
func Prologue() []byte      { return fuzzPrologue() }

const StreamMsize = fuzzMsize
