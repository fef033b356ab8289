package ninep

import (
	"io"
	"sync/atomic"
)

// Tags in p9: which tags p9 has a request in flight under, per connection.
//
// p9 answers every request it receives once, except one whose tag is already
// in flight there: that one it drops without a word ("no valid tag"). A client
// that reuses a tag so breaks the protocol, and the shim would wait forever for
// a fid-making request p9 dropped (await). So the shim keeps a bitmap of the
// tags of the client's requests it handed p9 (set as the reader hands one
// over, cleared as p9's reply to it starts) and drops a request whose tag is
// among them itself, as p9 would, with a log line: then every fid-making
// request p9 gets is answered, and waiting for it is safe however long it
// takes (a snapshot holding a create), which giving up is not (it leaves the
// fids the shim walked answering ESTALE).
//
// The shim's own requests (teaching, hand-over) borrow the tag of the client's
// request held back behind them, which cannot be in flight: they are not in
// the bitmap, and the held request's own look at the bitmap comes after their
// reply.
//
// One reply the bitmap cannot place: p9 answers a request it could not decode
// with tag NOTAG. The connection's bitmap is then unreliable (tagsLost) for
// good, and waits are bounded again (makeWait, ownWait). Only a client sending
// malformed messages gets there; Linux's does not.
type tagSet struct {
	bits [1 << 16 / 64]atomic.Uint64
	lost atomic.Bool // p9 answered NOTAG: some tag may stay set for good
}

func (s *tagSet) add(tag uint16) { s.bits[tag>>6].Or(1 << (tag & 63)) }

func (s *tagSet) remove(tag uint16) { s.bits[tag>>6].And(^uint64(1 << (tag & 63))) }

func (s *tagSet) has(tag uint16) bool { return s.bits[tag>>6].Load()&(1<<(tag&63)) != 0 }

// reused reports whether a request with tag would reach p9 while another of
// that tag is in flight there (a duplicate p9 would drop).
func (s *tagSet) reused(tag uint16) bool { return !s.lost.Load() && s.has(tag) }

// replied records p9's reply of type typ to tag.
func (s *tagSet) replied(typ uint8, tag uint16) {
	if tag == noTag && typ == msgRlerror {
		s.lost.Store(true)
		return
	}
	s.remove(tag)
}

// dropReused consumes a request whose tag p9 has in flight, as p9 would drop
// it, and logs it (rate-limited).
func (c *conn) dropReused(typ uint8, tag uint16, size int) error {
	if _, err := c.br.Discard(size); err != nil {
		return io.ErrUnexpectedEOF
	}
	if ok, held := c.srv.reuseLog.allow(); ok {
		c.srv.log.Warn("ninep: a request reused the tag of one in flight; dropped unanswered, as p9 drops it",
			"remote", c.nc.RemoteAddr().String(), "type", typ, "tag", tag, "similar_lines_held_back", held)
	}
	return nil
}
