package passage

import (
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/blas/blas32"

	"github.com/semfs/semfs/index/int8vec"
	"github.com/semfs/semfs/index/signcode"
)

// The meaning stage's cost. Every passage's cosine is 512 multiplications a
// passage: 600,000 passages (50,000 files of real text) are 300 million, and
// their float32 vectors 1.2 GB read per query. The scan that reads the index
// therefore takes its cosines from the vectors' int8 copies (index/int8vec:
// 512 bytes a vector, within about 0.005 of the exact cosine; the scattered
// reads are bound by their bytes: BenchmarkScan there, 1,500 vectors of
// 60,000, 32 µs against float32's 124 µs), and only a hit's passages get
// exact float32 cosines. Up to exhaustiveMax distinct vectors every one's
// int8 cosine is computed; above, two passes instead, as the tag index does
// for its vectors (index/vecscan.go):
//
//   - the coarse pass: the Hamming distance between the query's sign bits
//     and each distinct vector's (64 bytes a vector at 512 d; the angle
//     between two vectors is about π·hamming/dims) picks the likeliest, a
//     coarseShare of them between coarseMin and coarseMax;
//   - the fine pass: their int8 cosines pick the meaningFiles closest
//     files;
//   - the mean and deviation over every passage (StandOut) come from a
//     sample of statSample passages spread over the index.
//
// The scan reads each distinct vector once: passages whose vectors are equal
// (copies of one text: a file's copies, a template, a page written over and
// over) are one group (Index.groups), with one sign code, one int8 copy and one
// float32 array, whose cosine stands for all of them; the closest files take
// a group's passages in pid order, as many as can be among them
// (offerGroup), and the mean and deviation count each passage. So the scan's
// cost follows the distinct vectors, not the passages
// (BenchmarkMeaningScanCopies).
//
// Either way, every passage of the closest files and of the word stage's
// files then gets its exact cosine (byMeaning), or, of a file of more than
// perFileExact passages in a large index, the perFileExact nearest by sign
// bits: a file's Sim is an exact cosine, its best passage's but for a rare
// miss in a long file; a file the coarse pass misses is not among the
// closest. So a query reads 64 bytes a passage plus about a thousand int8
// copies at 10,000 passages: the meaning stage of a busy daemon's every
// query (issue 30's mixed load). TestPassageScale measures the recall of the
// closest files against the exhaustive scan (docs/contents.md): with these
// bounds, recall@10 0.98-1.0 and recall@50 0.94-0.97 from 3,600 to 37,000
// passages.
const (
	exhaustiveMax = 2_048
	coarseMin     = 512
	coarseMax     = 4_000
	statSample    = 512
	// coarseShare is the coarse pass's share of the index: 1/32.
	coarseShare = 32
	// perFileExact bounds a hit's exact cosines in a large index: a file of
	// thousands of passages (a 16 MiB log) would cost a full scan's share.
	perFileExact = 32
)

type simID struct {
	id  uint32
	sim float64
}

// scanned is the meaning stage's scan of the whole index: the closest files
// (each by its closest passage, closest first), and the sums for the mean and
// deviation.
type scanned struct {
	tops      []simID
	sum, sum2 float64
	cnt       int
	approx    bool // the coarse pass ran (sc.dist holds every group's distance)
}

// scan is the part of the meaning stage that reads every passage (the
// coarse pass or every int8 cosine); it needs nothing from the word stage, so it
// runs beside it. It writes only sc.dist and sc.byMeaning. Precondition: mu
// held for reading.
func (x *Index) scan(vec []float32, sc *scratch) (r scanned) {
	nq := norm(vec)
	if nq == 0 {
		return r
	}
	// Each file's closest passage, then the meaningFiles closest files: no
	// map or sort of every candidate.
	offer := func(id uint32, s float64) { sc.byMeaning.offer(x.meta[id].fid, simID{id, s}, closer) }
	defer func() {
		r.tops = sc.byMeaning.top(meaningFiles, closer)
		sort.Slice(r.tops, func(i, j int) bool { return closer(r.tops[i], r.tops[j]) })
		sc.byMeaning.reset()
	}()
	add := func(s float64) {
		r.sum += s
		r.sum2 += s * s
		r.cnt++
	}
	if len(vec) != x.dims {
		// A vector of another length than the index's (a client's of
		// another size): only passages of its length, rare, have a cosine
		// with it, each from float32.
		for id := 1; id < len(x.passes); id++ {
			ps := &x.passes[id]
			if ps.path == "" || ps.vec == nil || len(ps.vec) != len(vec) {
				continue
			}
			s := cosine(vec, ps.vec, nq, ps.nv)
			add(s)
			offer(uint32(id), s)
		}
		return r
	}
	d := x.dims
	qq := make([]int8, d)
	fq := int8vec.Put(qq, vec)
	near := func(vid uint32) float64 {
		return int8vec.Cosine(qq, x.q8[int(vid)*d:int(vid+1)*d], fq, x.q8f[vid])
	}
	// offerGroup offers a group's passages, in pid order, until meaningFiles
	// files have one: they all have cosine s, so a file whose first passage
	// in the group comes later is after those files by closer, whatever its
	// other passages.
	fids := sc.groupFids[:0]
	offerGroup := func(vid uint32, s float64) {
		if l := x.lead[vid]; l&manyBit == 0 {
			offer(l, s) // a group of one
			return
		}
		fids = fids[:0]
		for _, id := range x.groups[vid] {
			offer(id, s)
			if fid := x.meta[id].fid; !slices.Contains(fids, fid) {
				if fids = append(fids, fid); len(fids) == meaningFiles {
					break
				}
			}
		}
	}
	defer func() { sc.groupFids = fids }()
	limit := x.exhaustiveMax
	if limit <= 0 {
		limit = exhaustiveMax
	}
	r.approx = x.vids > limit
	if !r.approx {
		for vid, ok := range x.coded {
			if ok {
				s := near(uint32(vid))
				n := 1
				if x.lead[vid]&manyBit != 0 {
					n = len(x.groups[vid])
				}
				r.sum += float64(n) * s
				r.sum2 += float64(n) * s * s
				r.cnt += n
				offerGroup(uint32(vid), s)
			}
		}
		return r
	}
	// The sample: every every-th pid, when it has a vector (statSample of
	// them on average, however many pids have none), without a pass over
	// every pid: counting the coded ones to take every every-th cost a
	// quarter of the scan at 40,000 passages (BenchmarkMeaningScan).
	every := max(1, x.embedded/statSample)
	for id := 1; id < len(x.passes); id += every {
		if vid := x.vidOf[id]; vid != 0 {
			add(near(vid))
		}
	}
	for _, vid := range x.coarse(vec, sc.dist) {
		offerGroup(vid, near(vid))
	}
	return r
}

// closer orders passages by cosine, closest first, then by pid.
func closer(a, b simID) bool {
	if a.sim != b.sim {
		return a.sim > b.sim
	}
	return a.id < b.id
}

// byMeaning adds the meaning stage's evidence from its scan r: the
// meaningFiles files closest to vec become hits, and each hit (the word
// stage's too) gets its best passage's cosine, whether that stands out, and
// its best perFile passages by meaning. Precondition: mu held for reading.
func (x *Index) byMeaning(vec []float32, r scanned, sc *scratch, files map[uint32]*fileHits, get func(uint32) *fileHits) {
	nq := norm(vec)
	sim := func(id uint32) float64 {
		ps := &x.passes[id]
		return cosine(vec, ps.vec, nq, ps.nv)
	}
	sum, sum2, cnt, approx := r.sum, r.sum2, r.cnt, r.approx
	if cnt == 0 {
		return
	}
	mean := sum / float64(cnt)
	std := math.Sqrt(math.Max(0, sum2/float64(cnt)-mean*mean))
	for _, t := range r.tops {
		get(x.meta[t.id].fid)
	}
	// Every hit's passages, exactly; in a large index, of a file of more
	// than perFileExact passages only the perFileExact nearest by sign bits.
	var hist []int
	if approx {
		hist = make([]int, x.dims+2)
	}
	mine := make([]simID, 0, perFile)
	for _, f := range files {
		mine = mine[:0]
		cut, atCut := len(hist), len(f.pids)
		if approx && len(f.pids) > perFileExact {
			cut, atCut = x.nearCut(f.pids, sc.dist, hist, perFileExact)
		}
		for _, id := range f.pids {
			if d := int(sc.dist[x.vidOf[id]]); approx && (d > cut || d == cut && atCut == 0) {
				continue
			} else if approx && d == cut {
				atCut--
			}
			if ps := &x.passes[id]; ps.vec != nil && len(ps.vec) == len(vec) {
				mine = keepBest(mine, perFile, simID{id, sim(id)}, closer)
			}
		}
		if len(mine) == 0 {
			continue
		}
		f.sim, f.hasSim = mine[0].sim, true
		f.standOut = std > 0 && (mine[0].sim-mean)/std >= zStandOut
		for _, s := range mine {
			f.bySim = append(f.bySim, scored{id: s.id, sim: s.sim, hasVS: true})
			f.spans[s.id] = x.passes[s.id].span
		}
	}
}

// coarse returns the groups whose sign bits are nearest vec's, a
// coarseShare of them between coarseMin and coarseMax (ties at the cut-off:
// the lowest vids), leaving every group's distance in dist (len(x.groups) at
// least). Precondition: mu held for reading, len(vec) == x.dims.
func (x *Index) coarse(vec []float32, dist []uint16) []uint32 {
	qs := make([]uint64, signcode.Words(x.dims))
	signcode.Put(qs, vec)
	hist := make([]int, x.dims+1)
	n := len(x.groups)
	// Entry 0 is no group (a passage without one: vid 0), and a free vid
	// has no code: both are placed beyond every distance.
	far := uint16(x.dims + 1)
	dist[0] = far
	signcode.Distances(dist[:n], hist, x.codes, qs, x.coded, 1, far)
	ids := signcode.Nearest(dist[:n], hist, min(coarseMax, max(coarseMin, x.vids/coarseShare)), 1)
	near := make([]uint32, len(ids))
	for i, id := range ids {
		near[i] = uint32(id)
	}
	return near
}

// nearCut is the distance cut-off (and how many at it to keep) that keeps
// the k of pids nearest by their groups' dist, using hist (dims+2 long,
// returned zeroed).
func (x *Index) nearCut(pids []uint32, dist []uint16, hist []int, k int) (cut, atCut int) {
	for _, id := range pids {
		hist[dist[x.vidOf[id]]]++
	}
	below := 0
	for ; cut < len(hist)-1 && below+hist[cut] < k; cut++ {
		below += hist[cut]
	}
	for _, id := range pids {
		hist[dist[x.vidOf[id]]] = 0
	}
	return cut, k - below
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// cosine is q's and v's, clamped to [0, 1], given their norms.
func cosine(q, v []float32, nq, nv float64) float64 {
	if nq == 0 || nv == 0 {
		return 0
	}
	d := blas32.Dot(blas32.Vector{N: len(q), Inc: 1, Data: q}, blas32.Vector{N: len(v), Inc: 1, Data: v})
	return max(0, min(1, float64(d)/(nq*nv)))
}
