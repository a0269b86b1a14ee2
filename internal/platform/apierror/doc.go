// Package apierror is Outflow's one error type and its one wire envelope, {error, message, code, request_id}.
//
// Domain code returns *Error values with a stable code; everything that writes an error to a client (ogen's
// NewError, its decode-error, not-found and method-not-allowed hooks, the panic recovery and the
// idempotency middleware) goes through Write, so clients see one shape whatever failed. Causes stay in an
// unexported field and reach only the log; 5xx bodies never carry internals.
package apierror
