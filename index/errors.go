package index

import (
	"errors"
	"strings"
)

// Kind classifies an index error so that callers (the control socket) can map it
// to a status once, without looking at messages. Append only: do not reorder.
type Kind uint8

const (
	// KindOther is an error the index cannot classify.
	KindOther Kind = iota
	// KindNotFound: no record at the path (HTTP 404).
	KindNotFound
	// KindInvalid: the caller's input is wrong (bad path, malformed or unknown
	// vector, empty query); nothing was changed (HTTP 400).
	KindInvalid
	// KindIO: storage failed; the answer is unknown, never "nothing" (HTTP 500).
	KindIO
	// KindClosed: the index has been closed (HTTP 503).
	KindClosed
)

func (k Kind) String() string {
	switch k {
	case KindNotFound:
		return "not found"
	case KindInvalid:
		return "invalid"
	case KindIO:
		return "i/o error"
	case KindClosed:
		return "index closed"
	}
	return "error"
}

// Sentinel errors. Every error the index returns is an *Error; errors.Is matches
// these through Unwrap.
var (
	ErrNotFound = errors.New("no such record")
	// ErrInvalidVector: wrong dimensions, NaN/Inf, or a zero vector (cosine undefined).
	ErrInvalidVector = errors.New("invalid vector")
	// ErrUnknownModel: a vector names a model the index was not configured with.
	ErrUnknownModel = errors.New("unknown model")
	// ErrInvalidPath: empty, absolute, unclean ("", ".", "..", "//", trailing "/") or NUL.
	ErrInvalidPath = errors.New("invalid path")
	// ErrInvalidQuery: a query with neither words nor a vector.
	ErrInvalidQuery = errors.New("invalid query")
	// ErrInvalidRank: a query asking for a rank mode that does not exist.
	ErrInvalidRank = errors.New("unknown rank")
	// ErrInvalidText: tag text or creator that is not valid UTF-8.
	ErrInvalidText = errors.New("invalid text")
	// ErrClosed: the index was closed.
	ErrClosed = errors.New("index closed")
)

// Error is the one error type of the package: operation, kind, path and cause.
type Error struct {
	Op   string // "tag", "query", "open", ...
	Kind Kind
	Path string // record path, or the index directory for open/load; may be empty
	Err  error  // the cause; often one of the sentinels above
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("index ")
	b.WriteString(e.Op)
	if e.Path != "" {
		b.WriteString(" ")
		b.WriteString(e.Path)
	}
	b.WriteString(": ")
	b.WriteString(e.Kind.String())
	if e.Err != nil && e.Err.Error() != e.Kind.String() {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the Kind of the first *Error in err's chain, KindOther otherwise.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindOther
}

func errorf(op string, kind Kind, path string, err error) error {
	return &Error{Op: op, Kind: kind, Path: path, Err: err}
}

// ioErr wraps a storage failure; it keeps an inner *Error as is.
func ioErr(op, path string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Op: op, Kind: KindIO, Path: path, Err: err}
}
