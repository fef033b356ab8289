// Package signcode is the coarse pass of a nearest-neighbour scan over float
// vectors: each vector is kept as its sign bits (one bit per dimension, set
// for a positive component), and the Hamming distance between two codes
// estimates the angle between their vectors. Scanning codes reads a
// thirty-second of the bytes float32 vectors take, so a large set is narrowed to a few
// thousand candidates whose exact cosines are then computed by the caller.
// Both of the index's vector scans use it: the tags' (index/vecscan.go) and
// the passages' (index/passage/meaning.go).
package signcode

import (
	"math"
	"math/bits"
)

// Words is the number of uint64 words one code of a dims-dimensional vector takes.
func Words(dims int) int { return (dims + 63) / 64 }

// Put writes v's sign bits into dst (Words(len(v)) long): bit j of word w is
// set when v[w*64+j] > 0. Branch-free, a word at a time (a start computes
// 100k of them): a finite float32 is > 0 exactly when its bits, read as an
// int32, are > 0 (+0 is 0; -0 and negatives have the sign bit). v must be
// finite (the index's stored vectors are: checkVector).
func Put(dst []uint64, v []float32) {
	for w := range dst {
		var b uint64
		chunk := v[min(len(v), w*64):min(len(v), (w+1)*64)]
		for j, f := range chunk {
			b |= uint64(-int64(int32(math.Float32bits(f)))) >> 63 << j
		}
		dst[w] = b
	}
}

// Distances sets dist[i], for i from from to len(dist)-1, to the Hamming
// distance between q and code i of codes (len(q) words each), and counts each
// distance in hist (at least dims+1 long). When coded is not nil, an entry
// whose coded[i] is false has no code: its distance is far, and it is not
// counted.
func Distances(dist []uint16, hist []int, codes, q []uint64, coded []bool, from int, far uint16) {
	w := len(q)
	if w == 8 { // 512 d, USE-lite's: unrolled
		q0, q1, q2, q3, q4, q5, q6, q7 := q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7]
		for i := from; i < len(dist); i++ {
			if coded != nil && !coded[i] {
				dist[i] = far
				continue
			}
			c := codes[i*8 : i*8+8 : i*8+8]
			d := bits.OnesCount64(q0^c[0]) + bits.OnesCount64(q1^c[1]) +
				bits.OnesCount64(q2^c[2]) + bits.OnesCount64(q3^c[3]) +
				bits.OnesCount64(q4^c[4]) + bits.OnesCount64(q5^c[5]) +
				bits.OnesCount64(q6^c[6]) + bits.OnesCount64(q7^c[7])
			dist[i] = uint16(d)
			hist[d]++
		}
		return
	}
	for i := from; i < len(dist); i++ {
		if coded != nil && !coded[i] {
			dist[i] = far
			continue
		}
		c := codes[i*w : (i+1)*w]
		d := 0
		for j, x := range q {
			d += bits.OnesCount64(x ^ c[j])
		}
		dist[i] = uint16(d)
		hist[d]++
	}
}

// Nearest returns the m entries from from on with the least distances, in
// index order (ties at the cut-off: the lowest indexes), or all of those
// counted when fewer. hist holds the counts Distances made: the distances
// fall in [0, len(hist)), so the cut-off distance is found in one pass over
// hist and the entries in one over dist, without a heap.
func Nearest(dist []uint16, hist []int, m, from int) []int {
	cut, below := 0, 0
	for ; cut < len(hist) && below+hist[cut] < m; cut++ {
		below += hist[cut]
	}
	atCut := m - below // how many at distance cut to keep
	near := make([]int, 0, m)
	for i := from; i < len(dist); i++ {
		d := int(dist[i])
		if d < cut {
			near = append(near, i)
		} else if d == cut && cut < len(hist) && atCut > 0 { // an uncounted entry is never kept
			atCut--
			near = append(near, i)
		}
	}
	return near
}
