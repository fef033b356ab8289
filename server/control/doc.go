// Package control is the daemon's local API: HTTP/1.1 + JSON on a Unix socket, so
// that `curl --unix-socket` works, and the typed client the CLI uses.
//
// Routes are versioned under /v1. The caller's identity is the socket peer's uid
// (SO_PEERCRED), taken when the connection is accepted; request bodies never name
// who the caller is. Every error is JSON {"error":{"code","message"}} with a
// fitting status, and a failing index read is a 5xx, never an empty result.
package control
