package index

import (
	"container/heap"
	"math"

	"github.com/semfs/semfs/index/signcode"
)

// slotSim is one file's similarity to the query, by record slot.
type slotSim struct {
	slot int
	sim  float64
}

// scanResult is what the best rank needs from the vectors: the similarity of
// each keyword or name candidate, the k closest files, and the mean, standard
// deviation and maximum of the similarities over all files.
type scanResult struct {
	known          map[int]float64 // by slot: the candidates' similarities
	top            []slotSim       // the k closest, closest first
	mean, std, max float64
}

// Scanning every float32 vector is memory-bound: 100,000 × 512 dimensions are
// 200 MB read per query. Sets of more than exactMax vectors are scanned in two
// passes instead: the Hamming distance between sign bits (64 bytes a vector at
// 512 d; the angle between two vectors is about π·hamming/dims) picks the
// coarseFactor·k (at least coarseMin) likeliest vectors, and only those and the
// keyword candidates get the exact cosine. The mean and deviation come from an
// exact sample of statSample vectors spread over the set. The exact scores of
// returned files are exact; a file whose sign bits mislead the coarse pass can
// be missed from the semantic candidates, the price of the speed.
const (
	exactMax     = 20_000
	coarseFactor = 20
	coarseMin    = 1000
	statSample   = 512
)

// scan computes the similarity of q to the set's vectors (see above).
// Precondition: Index.mu held for reading.
// cands are the record slots of the keyword and name candidates; pathOf names
// a slot's record.
func (s *vecSet) scan(q []float32, cands []int, pathOf func(slot int) string, k int) scanResult {
	if s.len() <= exactMax || k >= s.len() {
		is := make(map[int]bool, len(cands))
		for _, c := range cands {
			is[c] = true
		}
		return s.scanExact(q, func(slot int) bool { return is[slot] }, k)
	}
	r := scanResult{known: map[int]float64{}}
	nq := norm(q)
	exact := func(i int) float64 { return similarity(dot(q, s.vector(i)), nq, s.norms[i]) }

	step := max(1, s.len()/statSample)
	var sum, sumSq, n float64
	for i := 0; i < s.len(); i += step {
		sim := exact(i)
		sum += sim
		sumSq += sim * sim
		n++
	}
	r.mean = sum / n
	r.std = math.Sqrt(math.Max(0, sumSq/n-r.mean*r.mean))

	signs := s.signCodes()
	w := s.codeWords()
	qs := make([]uint64, w)
	signcode.Put(qs, q)
	// The coarse pass: keep the m vectors of least Hamming distance. The
	// distances fall in [0, dims], so a histogram finds the cut-off distance
	// in two linear passes, without a heap (ties at the cut-off: the first
	// ones in set order).
	m := max(coarseMin, coarseFactor*k)
	dist := make([]uint16, s.len())
	hist := make([]int, s.dims+1)
	signcode.Distances(dist, hist, signs, qs, nil, 0, 0)
	near := signcode.Nearest(dist, hist, m, 0)
	for _, slot := range cands {
		if i, ok := s.pos[pathOf(slot)]; ok {
			r.known[slot] = exact(i)
		}
	}
	var h minSims
	for _, i := range near {
		sim := exact(i)
		switch {
		case len(h) < k:
			heap.Push(&h, slotSim{s.slots[i], sim})
		case sim > h[0].sim:
			h[0] = slotSim{s.slots[i], sim}
			heap.Fix(&h, 0)
		}
	}
	r.top = popAll(&h)
	if len(r.top) > 0 {
		r.max = r.top[0].sim
	}
	for _, v := range r.known {
		r.max = max(r.max, v)
	}
	return r
}

// scanExact: the cosine of every vector.
func (s *vecSet) scanExact(q []float32, isCand func(slot int) bool, k int) scanResult {
	r := scanResult{known: map[int]float64{}}
	nq := norm(q)
	var h minSims
	var sum, sumSq float64
	for i := range s.paths {
		sim := similarity(dot(q, s.vector(i)), nq, s.norms[i])
		sum += sim
		sumSq += sim * sim
		slot := s.slots[i]
		if isCand(slot) {
			r.known[slot] = sim
		}
		switch {
		case len(h) < k:
			heap.Push(&h, slotSim{slot, sim})
		case sim > h[0].sim:
			h[0] = slotSim{slot, sim}
			heap.Fix(&h, 0)
		}
	}
	n := float64(len(s.paths))
	if n > 0 {
		r.mean = sum / n
		r.std = math.Sqrt(math.Max(0, sumSq/n-r.mean*r.mean))
	}
	r.top = popAll(&h)
	if len(r.top) > 0 {
		r.max = r.top[0].sim
	}
	return r
}

func popAll(h *minSims) []slotSim {
	out := make([]slotSim, h.Len())
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(h).(slotSim)
	}
	return out
}

func (s *vecSet) codeWords() int { return signcode.Words(s.dims) }

// signCodes returns the sign bits of every vector, building them on first use.
// Precondition: Index.mu held (for reading at least).
func (s *vecSet) signCodes() []uint64 {
	s.signMu.Lock()
	defer s.signMu.Unlock()
	if w := s.codeWords(); len(s.signs) != s.len()*w {
		signs := make([]uint64, s.len()*w)
		for i := range s.paths {
			signcode.Put(signs[i*w:(i+1)*w], s.vector(i))
		}
		s.signs = signs
	}
	return s.signs
}

// minSims is a heap whose top is the least similar kept file.
type minSims []slotSim

func (h minSims) Len() int           { return len(h) }
func (h minSims) Less(i, j int) bool { return h[i].sim < h[j].sim }
func (h minSims) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minSims) Push(x any)        { *h = append(*h, x.(slotSim)) }
func (h *minSims) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
