package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/blas/blas32"

	"github.com/semfs/semfs/index/signcode"
)

// Stored vector values are compact binary: one kind byte, the FNV-64a hash of the
// tag text the vector was computed from (0 for client vectors), then the float32
// values little-endian. The hash lets the background re-embedder tell a current
// in-process vector from one made for an old path, old tags or another model.
const (
	vecInProcess byte = 'e' // computed by the in-process embedder; re-embedded on rename
	vecClient    byte = 'c' // supplied by a client; stored as sent, never re-embedded
	vecHeader         = 9
)

type vecValue struct {
	kind   byte
	hash   uint64
	values []float32
}

func encodeVector(kind byte, hash uint64, v []float32) string {
	b := make([]byte, vecHeader+4*len(v))
	b[0] = kind
	binary.LittleEndian.PutUint64(b[1:9], hash)
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[vecHeader+4*i:], math.Float32bits(f))
	}
	return string(b)
}

func decodeVector(s string) (vecValue, error) {
	if len(s) < vecHeader || (len(s)-vecHeader)%4 != 0 || (s[0] != vecInProcess && s[0] != vecClient) {
		return vecValue{}, errors.New("malformed stored vector")
	}
	v := vecValue{kind: s[0], hash: binary.LittleEndian.Uint64([]byte(s[1:9]))}
	v.values = make([]float32, (len(s)-vecHeader)/4)
	decodeFloats(v.values, s[vecHeader:])
	return v, nil
}

// littleEndian: the stored layout is little-endian, so on such machines decoding
// is one copy.
var littleEndian = func() bool { x := uint16(1); return *(*byte)(unsafe.Pointer(&x)) == 1 }()

// decodeFloats fills dst from len(dst)*4 little-endian bytes of src.
func decodeFloats(dst []float32, src string) {
	if littleEndian && len(dst) > 0 {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), 4*len(dst)), src)
		return
	}
	for i := range dst {
		o := 4 * i
		dst[i] = math.Float32frombits(uint32(src[o]) | uint32(src[o+1])<<8 | uint32(src[o+2])<<16 | uint32(src[o+3])<<24)
	}
}

// vectorHeader reads kind and hash without decoding the values.
func vectorHeader(s string) (kind byte, hash uint64, ok bool) {
	if len(s) < vecHeader || (s[0] != vecInProcess && s[0] != vecClient) {
		return 0, 0, false
	}
	return s[0], binary.LittleEndian.Uint64([]byte(s[1:9])), true
}

func textHash(text string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(text))
	return h.Sum64()
}

// checkVector: right length, every value finite, not all zero (the cosine of a
// zero vector is undefined).
func checkVector(v []float32, dims int) error {
	if len(v) != dims {
		return fmt.Errorf("%w: %d values, model has %d dimensions", ErrInvalidVector, len(v), dims)
	}
	nonzero := false
	for i, f := range v {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return fmt.Errorf("%w: value %d is %v", ErrInvalidVector, i, f)
		}
		if f != 0 {
			nonzero = true
		}
	}
	if !nonzero {
		return fmt.Errorf("%w: zero vector", ErrInvalidVector)
	}
	return nil
}

func dot(a, b []float32) float32 {
	return blas32.Dot(blas32.Vector{N: len(a), Inc: 1, Data: a}, blas32.Vector{N: len(b), Inc: 1, Data: b})
}

func norm(a []float32) float64 { return math.Sqrt(float64(dot(a, a))) }

// similarity is the one formula the ranking uses: cosine clamped to [0, 1], 0 when
// either norm is 0. Query scans call it with precomputed norms so results are
// bit-identical to Similarity.
func similarity(d float32, na, nb float64) float64 {
	if na == 0 || nb == 0 {
		return 0
	}
	s := float64(d) / (na * nb)
	switch {
	case s > 1:
		return 1
	case s > 0:
		return s
	}
	return 0 // negative or NaN
}

// Similarity returns the clamped cosine similarity the query ranks with; a and b
// must have the same length. Exported so tests and tools can reproduce scores
// bit for bit.
func Similarity(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	return similarity(dot(a, b), norm(a), norm(b))
}

// vecSet holds every vector of one model in one contiguous slice for the scan.
// slots[i] is the hayTable slot of paths[i]'s record, so a query can place
// similarities by record without hashing paths.
// Precondition for every method: Index.mu held (read for sim, write otherwise).
type vecSet struct {
	dims  int
	paths []string
	slots []int
	kinds []byte
	data  []float32
	norms []float64
	pos   map[string]int

	// signs holds one bit per dimension of each vector (set: value > 0),
	// codeWords uint64 per vector, for the best rank's coarse scan of large
	// sets (vecscan.go). Built on first use under signMu (queries hold
	// Index.mu only for reading); put and del, which hold Index.mu for
	// writing, keep it current once built.
	signMu sync.Mutex
	signs  []uint64
}

func newVecSet(dims int) *vecSet { return &vecSet{dims: dims, pos: map[string]int{}} }

func (s *vecSet) put(path string, kind byte, v []float32, slot int) {
	if i, ok := s.pos[path]; ok {
		copy(s.data[i*s.dims:(i+1)*s.dims], v)
		s.norms[i] = norm(v)
		s.kinds[i] = kind
		s.slots[i] = slot
		if s.signs != nil {
			signcode.Put(s.signs[i*s.codeWords():(i+1)*s.codeWords()], v)
		}
		return
	}
	if s.signs != nil {
		s.signs = append(s.signs, make([]uint64, s.codeWords())...)
		signcode.Put(s.signs[len(s.paths)*s.codeWords():], v)
	}
	s.pos[path] = len(s.paths)
	s.paths = append(s.paths, path)
	s.slots = append(s.slots, slot)
	s.kinds = append(s.kinds, kind)
	s.data = append(s.data, v...)
	s.norms = append(s.norms, norm(v))
}

// reslot records that path's record moved to another slot.
func (s *vecSet) reslot(path string, slot int) {
	if i, ok := s.pos[path]; ok {
		s.slots[i] = slot
	}
}

// del swaps the last vector into the hole: order in the set carries no meaning.
func (s *vecSet) del(path string) {
	i, ok := s.pos[path]
	if !ok {
		return
	}
	last := len(s.paths) - 1
	if i != last {
		s.paths[i] = s.paths[last]
		s.slots[i] = s.slots[last]
		s.kinds[i] = s.kinds[last]
		copy(s.data[i*s.dims:(i+1)*s.dims], s.data[last*s.dims:(last+1)*s.dims])
		s.norms[i] = s.norms[last]
		if s.signs != nil {
			w := s.codeWords()
			copy(s.signs[i*w:(i+1)*w], s.signs[last*w:(last+1)*w])
		}
		s.pos[s.paths[i]] = i
	}
	delete(s.pos, path)
	s.paths = s.paths[:last]
	s.slots = s.slots[:last]
	s.kinds = s.kinds[:last]
	s.data = s.data[:last*s.dims]
	s.norms = s.norms[:last]
	if s.signs != nil {
		s.signs = s.signs[:last*s.codeWords()]
	}
}

func (s *vecSet) len() int { return len(s.paths) }

func (s *vecSet) vector(i int) []float32 { return s.data[i*s.dims : (i+1)*s.dims] }
