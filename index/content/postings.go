package content

import "github.com/RoaringBitmap/roaring/v2"

// postings maps a trigram to its posting: a two-level table, indexed by the
// trigram's first two bytes, then its third. It was a Go map: the indexer
// looks up every distinct trigram of a batch, in sorted order, and the map's
// hashing scattered those lookups over the whole table, a cache miss each
// (17 % of the content indexer's CPU on the benchmark corpus). Here trigrams
// sorted together share a page, which stays in cache. A page is 2 KiB and
// exists only for the two-byte prefixes some text holds.
type postings struct {
	pages [1 << 16]*[256]*roaring.Bitmap
	n     int // trigrams with a posting
}

func newPostings() *postings { return new(postings) }

// get is t's posting, nil for none.
func (ps *postings) get(t uint32) *roaring.Bitmap {
	if pg := ps.pages[t>>8&0xffff]; pg != nil {
		return pg[t&0xff]
	}
	return nil
}

// getOrNew is t's posting, an empty one added if it had none.
func (ps *postings) getOrNew(t uint32) *roaring.Bitmap {
	pg := ps.pages[t>>8&0xffff]
	if pg == nil {
		pg = new([256]*roaring.Bitmap)
		ps.pages[t>>8&0xffff] = pg
	}
	b := pg[t&0xff]
	if b == nil {
		b = roaring.New()
		pg[t&0xff] = b
		ps.n++
	}
	return b
}

// set makes b t's posting (load).
func (ps *postings) set(t uint32, b *roaring.Bitmap) {
	pg := ps.pages[t>>8&0xffff]
	if pg == nil {
		pg = new([256]*roaring.Bitmap)
		ps.pages[t>>8&0xffff] = pg
	}
	if pg[t&0xff] == nil {
		ps.n++
	}
	pg[t&0xff] = b
}

// each calls fn for every posting, in trigram order; fn returning false
// removes that posting.
func (ps *postings) each(fn func(t uint32, b *roaring.Bitmap) (keep bool)) {
	for hi, pg := range ps.pages {
		if pg == nil {
			continue
		}
		used, removed := false, false
		for lo, b := range pg {
			if b == nil {
				continue
			}
			if fn(uint32(hi)<<8|uint32(lo), b) {
				used = true
			} else {
				pg[lo] = nil
				ps.n--
				removed = true
			}
		}
		if removed && !used {
			ps.pages[hi] = nil // only when fn removed something: a Save only reads
		}
	}
}

// len is how many trigrams have a posting.
func (ps *postings) len() int { return ps.n }
