package nfs

import (
	"log/slog"
	"sync"
	"time"
)

// shedLogEvery is how often a listener at its connection cap logs the
// connections it refused: a peer opening connections in a loop must not flood
// the log.
const shedLogEvery = 10 * time.Second

// shedLog counts the connections a listener refused at its MaxConns and logs
// them at most once per shedLogEvery (the first refusal at once). Safe for
// concurrent use.
type shedLog struct {
	mu      sync.Mutex
	last    time.Time
	refusal int
}

func (l *shedLog) refused(log *slog.Logger, listener string, max int) {
	l.mu.Lock()
	l.refusal++
	now := time.Now()
	if !l.last.IsZero() && now.Sub(l.last) < shedLogEvery {
		l.mu.Unlock()
		return
	}
	n := l.refusal
	l.refusal, l.last = 0, now
	l.mu.Unlock()
	log.Warn("NFS connection limit reached; refusing connections", "listener", listener, "max_conns", max, "refused", n)
}
