package index

import (
	"container/heap"
	"math"
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

// scan computes the similarity of q to every vector of the set.
// Precondition: Index.mu held for reading.
func (s *vecSet) scan(q []float32, isCand func(slot int) bool, k int) scanResult {
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
	r.top = make([]slotSim, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		r.top[i] = heap.Pop(&h).(slotSim)
	}
	if len(r.top) > 0 {
		r.max = r.top[0].sim
	}
	return r
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
