package store

import (
	"errors"
	"fmt"
)

// Error codes shared by every layer. The api package maps each to one HTTP
// status; anything that is not an *Error reads as EINTERNAL.
const (
	EINVALID      = "invalid"
	EUNAUTHORIZED = "unauthorized"
	EFORBIDDEN    = "forbidden"
	ENOTFOUND     = "not_found"
	ECONFLICT     = "conflict"
	EQUOTA        = "quota_exceeded"
	ERATELIMIT    = "rate_limited"
	EUPSTREAM     = "upstream"
	EUNAVAILABLE  = "unavailable"
	EUNSUPPORTED  = "unsupported"
	EINTERNAL     = "internal"
)

// Error is the domain error: a code for programs, a message for people, and
// an optional wrapped cause that is logged but never shown to a client.
type Error struct {
	Code    string
	Message string
	Err     error
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Unwrap returns the wrapped cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Internal wraps an unexpected cause as an EINTERNAL error.
func Internal(err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Code: EINTERNAL, Message: "Internal error.", Err: err}
}

// ErrorCode returns the code of err, EINTERNAL for foreign errors and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the human message of err; foreign errors read as
// "Internal error." so that causes never leak.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) && e.Code != EINTERNAL {
		return e.Message
	}
	return "Internal error."
}
