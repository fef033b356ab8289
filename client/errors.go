package client

import "fmt"

// APIError is an error the daemon answered with.
type APIError struct {
	Status  int    // HTTP status
	Code    string // one of the Code constants, or "http" for a body that was not the daemon's
	Message string
}

func (e *APIError) Error() string { return fmt.Sprintf("%s (%d %s)", e.Message, e.Status, e.Code) }

// UnreachableError means the daemon could not be reached at all: no socket, no
// listener, or the connection broke before an answer.
type UnreachableError struct {
	Socket string
	Err    error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach the semfs daemon at %s: %v (is `semfs serve` running?)", e.Socket, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }
