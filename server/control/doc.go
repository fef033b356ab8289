// Package control is the daemon's local API: HTTP/1.1 + JSON on a Unix socket, so
// that `curl --unix-socket` works, and the typed client the CLI uses.
//
// Routes are versioned under /v1. The caller's identity is the socket peer's uid
// (SO_PEERCRED), taken when the connection is accepted; request bodies never name
// who the caller is. Every error is JSON {"error":{"code","message"}} with a
// fitting status, and a failing index read is a 5xx, never an empty result.
//
// A client cannot hold the daemon: a request must arrive whole within the body
// timeout of its first byte (else 408 and the connection closes), a keep-alive
// connection with no request in progress closes after the idle timeout, and a
// connection over the cap is answered 503 and closed (server.Limits). Bodies are
// read whole before any handler runs, bounded per request (MaxBody, MaxTagsBody)
// and across requests; a body that is not valid UTF-8 is refused, never
// "repaired" into a path naming another file. A refused request changes nothing.
// /v1/health answers 503 when the backing directory was moved or removed.
//
// Under a --policy file (policy.go) the caller is the app registered for its
// uid, and the daemon's own uid and root are the operator: a path hidden from
// the caller answers exactly as a missing one (404, the same message), is left
// out of query results, and a tag outside its rights is 403.
package control
