// Package usage marks errors that are the caller's mistake (a bad option,
// a bad configuration file) rather than a failure while working, so a
// command-line face can tell the two apart (exit code 2 vs 1) without the
// libraries knowing about exit codes.
package usage

import (
	"errors"
	"fmt"
)

// Error is a usage mistake; its message is the wrapped error's.
type Error struct{ Err error }

// Error is the wrapped error's message.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns a usage error formatted as fmt.Errorf would.
func Errorf(format string, args ...any) error {
	return &Error{fmt.Errorf(format, args...)}
}

// Wrap marks err as a usage error; nil stays nil.
func Wrap(err error) error {
	if err == nil {
		return nil
	}
	return &Error{err}
}

// Is reports whether err or an error it wraps is a usage error.
func Is(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
