package feed

import "slices"

// events is the kept history, oldest first, in chunks of chunkLen events
// filled in place. Appending never copies what is kept: the slice it replaces,
// trimmed at its front and appended to at its back, was reallocated with the
// whole history copied (12.8 MB at the default bound) every quarter of the
// bound, a memmove the garbage collector cannot interrupt and waits for
// (BenchmarkRecordCreates: 4.7–9.1 µs a create's two events, 3.1–4.4 in
// chunks). A filled slot is never written again, so a reader's view needs
// the lock only to be taken.
//
// The zero events is empty and ready. Not safe for concurrent use: Log.mu
// guards it.
type events struct {
	chunks [][]Event // every chunk but the last holds chunkLen events
	off    int       // the oldest kept event's place in chunks[0]
}

// chunkLen is the events of one chunk (128 B each: 512 KiB a chunk, 25 at
// the default bound).
const chunkLen = 4096

// Len is the number of events kept.
func (h *events) Len() int {
	n := len(h.chunks)
	if n == 0 {
		return 0
	}
	return (n-1)*chunkLen + len(h.chunks[n-1]) - h.off
}

// push appends evs, newest last.
func (h *events) push(evs ...Event) {
	for len(evs) > 0 {
		n := len(h.chunks)
		if n == 0 || len(h.chunks[n-1]) == chunkLen {
			h.chunks = append(h.chunks, make([]Event, 0, chunkLen))
			n++
		}
		last := h.chunks[n-1]
		k := min(len(evs), chunkLen-len(last))
		h.chunks[n-1] = append(last, evs[:k]...) // within its capacity: no copy of it
		evs = evs[k:]
	}
}

// drop forgets the n oldest events (n <= Len).
func (h *events) drop(n int) {
	h.off += n
	for h.off >= chunkLen {
		// A reader's view keeps its own list of chunks: this one lives on
		// for as long as such a view does.
		h.chunks[0] = nil
		h.chunks = h.chunks[1:]
		h.off -= chunkLen
	}
}

// at is the i-th oldest event kept (0 <= i < Len).
func (h *events) at(i int) *Event { return eventAt(h.chunks, h.off, i) }

// eventAt is the i-th event of chunks whose oldest is at slot off of the
// first: events' place arithmetic, for the history and a reader's view.
func eventAt(chunks [][]Event, off, i int) *Event {
	j := off + i
	return &chunks[j/chunkLen][j%chunkLen]
}

// view is what a reader reads without the lock: the events kept when it
// was taken (Log.mu held), the i-th oldest at at(i).
func (h *events) view() view {
	return view{chunks: slices.Clone(h.chunks), off: h.off, n: h.Len()}
}

type view struct {
	chunks [][]Event
	off, n int
}

// at is the i-th oldest event of the view (0 <= i < n).
func (v view) at(i int) *Event { return eventAt(v.chunks, v.off, i) }
