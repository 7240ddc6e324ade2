package cardflow

import (
	"errors"
	"fmt"
	"time"
)

// Error codes. Each maps to exactly one HTTP status in the httpapi package.
const (
	EINVALID      = "VALIDATION_ERROR"
	EUNAUTHORIZED = "UNAUTHORIZED"
	EFORBIDDEN    = "FORBIDDEN"
	ENOTFOUND     = "NOT_FOUND"
	EMETHOD       = "METHOD_NOT_ALLOWED"
	ECONFLICT     = "CONFLICT"
	ETOOLARGE     = "PAYLOAD_TOO_LARGE"
	ETHROTTLED    = "THROTTLED"
	EINTERNAL     = "INTERNAL"
	EUNAVAILABLE  = "UNAVAILABLE"
)

// Error is the one error type of the domain. Message is written for a person
// and is returned to API callers, so it must never carry secrets or internals.
type Error struct {
	Code    string
	Message string
	// RetryAfter is when a THROTTLED or UNAVAILABLE caller may try again
	// (Retry-After).
	RetryAfter time.Duration
}

func (e *Error) Error() string { return fmt.Sprintf("cardflow: %s: %s", e.Code, e.Message) }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err, EINTERNAL for errors that are not *Error
// and "" for nil.
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

// ErrorMessage returns the person-facing message of err. Errors that are not
// *Error are internal and get a generic message; their details go to the log.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}
