package server

import "time"

// Limits bound what one client of a door (NFS, 9P, the control socket) may hold:
// a local process that opens connections and then stalls, dribbles or never
// finishes a request must not keep a descriptor and a goroutine forever, nor
// crowd out every other app. The zero value of a field means its default.
type Limits struct {
	// IdleTimeout closes a connection that has no request in progress for this
	// long. NFS clients reconnect transparently and HTTP clients open a new
	// connection, so both doors apply it to every connection. A 9P mount cannot
	// reconnect, so 9P applies it only before the attach (a connection that never
	// mounts anything).
	IdleTimeout time.Duration
	// BodyTimeout bounds how long one request may take to arrive once its first
	// byte has: a record mark, a 9P message or an HTTP header and body.
	BodyTimeout time.Duration
	// MaxConns caps the connections served at once per listener; one over it is
	// accepted and closed at once (and logged), so the listener never backs up.
	MaxConns int
}

// Default limits: generous for real clients (a kernel mount keeps one or a few
// connections; a 1 MiB WRITE arrives in milliseconds on loopback), tight enough
// that a stalled or hostile peer is shed.
const (
	DefaultIdleTimeout = 10 * time.Minute
	DefaultBodyTimeout = 30 * time.Second
	DefaultMaxConns    = 512
)

// WithDefaults returns l with each unset field given its default. A negative
// duration or count means "no limit".
func (l Limits) WithDefaults() Limits {
	if l.IdleTimeout == 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	if l.BodyTimeout == 0 {
		l.BodyTimeout = DefaultBodyTimeout
	}
	if l.MaxConns == 0 {
		l.MaxConns = DefaultMaxConns
	}
	return l
}
