package content

import "github.com/RoaringBitmap/roaring/v2"

// eval is the ids of the live files satisfying q. Precondition: mu held.
func (x *Index) eval(q *Query) *roaring.Bitmap {
	switch q.Op {
	case QAll:
		return x.live.Clone()
	case QNone:
		return roaring.New()
	case QAnd:
		var acc *roaring.Bitmap
		for _, t := range q.Trigrams {
			b := x.post.get(t)
			if b == nil {
				return roaring.New()
			}
			if acc == nil {
				acc = b.Clone()
			} else {
				acc.And(b)
			}
			if acc.IsEmpty() {
				return acc
			}
		}
		for _, s := range q.Sub {
			b := x.eval(s)
			if acc == nil {
				acc = b
			} else {
				acc.And(b)
			}
			if acc.IsEmpty() {
				return acc
			}
		}
		if acc == nil {
			return x.live.Clone()
		}
		acc.And(x.live)
		return acc
	case QOr:
		acc := roaring.New()
		for _, t := range q.Trigrams {
			if b := x.post.get(t); b != nil {
				acc.Or(b)
			}
		}
		for _, s := range q.Sub {
			acc.Or(x.eval(s))
		}
		acc.And(x.live)
		return acc
	}
	return x.live.Clone()
}
