package apierror

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// Error is a failure a client can act on: an HTTP status, a stable machine-readable code and a message
// written for people. Fix, when set, tells the caller how to get past it.
type Error struct {
	// Status is the HTTP status code the error is answered with.
	Status int
	// Code is the stable identifier clients branch on (for example "idempotency_key_reused").
	Code string
	// Message explains the failure to a person; never internals.
	Message string
	// Fix is an optional hint on how to resolve the failure.
	Fix string
	// RetryAfter, when positive, is sent as the Retry-After header in seconds.
	RetryAfter int

	cause error
	// invalidToken marks a 401 for a bearer token that authenticates nothing (see InvalidToken).
	invalidToken bool
}

// Error implements error with the code and message; the cause is logged separately, never shown.
func (e *Error) Error() string {
	if e.cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.cause)
	}
	return e.Code + ": " + e.Message
}

// Unwrap exposes the cause to errors.Is/As so callers can still test for it.
func (e *Error) Unwrap() error { return e.cause }

// WithCause returns a copy of e that records cause for the log.
func (e *Error) WithCause(cause error) *Error {
	c := *e
	c.cause = cause
	return &c
}

// WithFix returns a copy of e carrying a hint on how to resolve it.
func (e *Error) WithFix(fix string) *Error {
	c := *e
	c.Fix = fix
	return &c
}

// New builds an error with an explicit status; prefer the named constructors below.
func New(status int, code, message string) *Error {
	return &Error{Status: status, Code: code, Message: message}
}

// BadRequest is a 400: the request is malformed or breaks a documented rule.
func BadRequest(code, message string) *Error { return New(http.StatusBadRequest, code, message) }

// Unauthorized is a 401: no credential, or one that authenticates nothing.
func Unauthorized(code, message string) *Error { return New(http.StatusUnauthorized, code, message) }

// InvalidToken is a 401 for a bearer token that was sent but authenticates nothing (malformed, unknown,
// expired or revoked). Its answer's challenge carries error="invalid_token" (RFC 6750 section 3.1), which tells
// a client to get a new token instead of retrying this one.
func InvalidToken(code, message string) *Error {
	e := Unauthorized(code, message)
	e.invalidToken = true
	return e
}

// Forbidden is a 403: the credential is valid but may not do this.
func Forbidden(code, message string) *Error { return New(http.StatusForbidden, code, message) }

// NotFound is a 404: unknown id, malformed id, or a row of another organization.
func NotFound(code, message string) *Error { return New(http.StatusNotFound, code, message) }

// Conflict is a 409: the resource's state does not allow the change now.
func Conflict(code, message string) *Error { return New(http.StatusConflict, code, message) }

// Unprocessable is a 422: well-formed, but contradicts earlier input (for example a reused idempotency key).
func Unprocessable(code, message string) *Error {
	return New(http.StatusUnprocessableEntity, code, message)
}

// TooManyRequests is a 429; retryAfter seconds is sent as Retry-After when positive.
func TooManyRequests(code, message string, retryAfter int) *Error {
	e := New(http.StatusTooManyRequests, code, message)
	e.RetryAfter = retryAfter
	return e
}

// Unavailable is a 503: a capability the request needs is not available right now.
func Unavailable(code, message string) *Error {
	return New(http.StatusServiceUnavailable, code, message)
}

// Internal is a 500 whose cause is logged and never shown.
func Internal(cause error) *Error {
	return &Error{Status: http.StatusInternalServerError, Code: "internal_error",
		Message: "Something went wrong on our side. Quote the request id when you report it.", cause: cause}
}

// From turns any error into an *Error: an *Error (anywhere in the chain) is kept, a deadline or a
// cancellation becomes 503, anything else is an internal error.
func From(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return Unavailable("timeout", "The request took too long. Retry it.").WithCause(err)
	}
	if errors.Is(err, context.Canceled) {
		return Unavailable("canceled", "The request was canceled before it finished.").WithCause(err)
	}
	return Internal(err)
}

// statusWords is the short lowercase word of the envelope's `error` field for each status.
var statusWords = map[int]string{
	http.StatusBadRequest:            "bad_request",
	http.StatusUnauthorized:          "unauthorized",
	http.StatusForbidden:             "forbidden",
	http.StatusNotFound:              "not_found",
	http.StatusMethodNotAllowed:      "method_not_allowed",
	http.StatusConflict:              "conflict",
	http.StatusRequestEntityTooLarge: "payload_too_large",
	http.StatusUnprocessableEntity:   "unprocessable",
	http.StatusTooManyRequests:       "rate_limited",
	http.StatusInternalServerError:   "internal",
	http.StatusNotImplemented:        "not_implemented",
	http.StatusServiceUnavailable:    "unavailable",
}

// Word returns the envelope's short `error` word for an HTTP status.
func Word(status int) string {
	if w, ok := statusWords[status]; ok {
		return w
	}
	if status >= 500 {
		return "internal"
	}
	return "error"
}
