package embed

import (
	"errors"
	"fmt"
)

// Kind classifies an embed error so callers can decide without reading text:
// the daemon falls back to keyword-only search on KindModel*, and answers a
// client 400 on KindInput. Append only; do not reorder.
type Kind uint8

const (
	KindOther        Kind = iota // unclassified
	KindModelMissing             // the model directory or one of its files does not exist
	KindModelInvalid             // a model file exists but cannot be parsed or has the wrong shape
	KindInput                    // a text or argument the caller passed cannot be embedded (e.g. empty)
	KindCanceled                 // the context ended before the batch finished
)

func (k Kind) String() string {
	switch k {
	case KindModelMissing:
		return "model missing"
	case KindModelInvalid:
		return "model invalid"
	case KindInput:
		return "invalid input"
	case KindCanceled:
		return "canceled"
	}
	return "error"
}

// Error is every error this package returns. Path names the model file or
// directory involved, if any; Op names the operation ("load", "embed", ...).
type Error struct {
	Op   string
	Kind Kind
	Path string
	Err  error
}

func (e *Error) Error() string {
	s := "embed " + e.Op
	if e.Path != "" {
		s += " " + e.Path
	}
	s += ": " + e.Kind.String()
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// ErrEmptyText is wrapped by the error Embed returns for a text that holds no
// non-space character: such a text has no meaning to embed, and a zero vector
// would silently score 0 against everything instead of telling the caller.
var ErrEmptyText = errors.New("empty text")

// KindOf returns the Kind of err if it is (or wraps) an *Error, else KindOther.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindOther
}

func errorf(op string, kind Kind, path string, format string, args ...any) error {
	return &Error{Op: op, Kind: kind, Path: path, Err: fmt.Errorf(format, args...)}
}
