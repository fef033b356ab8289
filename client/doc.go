// Package client talks to a semfs daemon over its control socket (HTTP/JSON on
// a Unix socket). It uses the standard library only, so programs that import it
// (the semfs CLI, apps, tests) build for Linux, macOS and Windows and do not
// link the daemon's index.
//
// The wire types here mirror server/control's and index's JSON shapes field for
// field; wire_test.go checks that they stay identical, and the integration tests
// decode real daemon answers into them with unknown fields disallowed.
package client
