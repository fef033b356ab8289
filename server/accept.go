package server

import (
	"errors"
	"log/slog"
	"net"
	"syscall"
	"time"
)

// Accept runs a front end's accept loop: every connection accepted on ln goes to
// handle. It returns nil once ln is closed and any other failure as is, except
// those that pass on their own (a timeout, the process or system out of file
// descriptors): those are retried with a backoff of up to a second, so a burst
// of clients cannot stop a listener for good.
func Accept(ln net.Listener, log *slog.Logger, handle func(net.Conn)) error {
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err == nil {
			backoff = 0
			handle(c)
			continue
		}
		if errors.Is(err, net.ErrClosed) {
			return nil
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			if log != nil {
				log.Warn("accept failed; retrying", "listener", ln.Addr().String(), "err", err, "in", backoff)
			}
			time.Sleep(backoff)
			continue
		}
		return err
	}
}
