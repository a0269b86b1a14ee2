package db

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// Postgres SQLSTATE codes the API answers specifically.
const (
	sqlstateUniqueViolation      = "23505"
	sqlstateForeignKeyViolation  = "23503"
	sqlstateSerializationFailure = "40001"
	sqlstateDeadlockDetected     = "40P01"
	sqlstateNumericOutOfRange    = "22003"
	sqlstateStringTooLong        = "22001"
	sqlstateInvalidByteSequence  = "22021"
	sqlstateUntranslatable       = "22P05"
)

// Classify maps a Postgres error to an API error once, at the data boundary: no rows is a 404, a unique
// violation a 409, a serialization failure or deadlock a 503 the client may retry, a value Postgres cannot
// store a 400 (see ClassifyInput). what names the resource for the message (for example "API key"). Other
// errors pass through unchanged and end as 500s.
func Classify(err error, what string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return apierror.NotFound("not_found", what+" not found.").WithCause(err)
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch pg.Code {
		case sqlstateUniqueViolation:
			return apierror.Conflict("already_exists", what+" already exists.").WithCause(err)
		case sqlstateForeignKeyViolation:
			return apierror.Conflict("still_referenced", what+" is referenced by or refers to another resource.").WithCause(err)
		case sqlstateSerializationFailure, sqlstateDeadlockDetected:
			return apierror.Unavailable("retry", "A concurrent change got in the way. Retry the request.").WithCause(err)
		}
	}
	return ClassifyInput(err)
}

// ClassifyInput maps the Postgres errors that mean the client sent a value no column can hold (a number
// beyond its column's range, text longer than its column, NUL or bytes that are not UTF-8) to 400s, and
// passes anything else through. The request layer checks these rules first and names the field; this is
// the last wall, applied to every error a handler returns, so a rule missing there answers 400 rather than
// 500.
func ClassifyInput(err error) error {
	var pg *pgconn.PgError
	if !errors.As(err, &pg) {
		// pgx checks a Go integer against an int2/int4 parameter before sending it, with an untyped error.
		if msg := err.Error(); strings.Contains(msg, "failed to encode args") &&
			(strings.Contains(msg, "greater than maximum value") || strings.Contains(msg, "less than minimum value")) {
			return apierror.BadRequest("number_out_of_range", "A number in the request is outside the range its field accepts.").WithCause(err)
		}
		return err
	}
	switch pg.Code {
	case sqlstateNumericOutOfRange:
		return apierror.BadRequest("number_out_of_range", "A number in the request is outside the range its field accepts.").WithCause(err)
	case sqlstateStringTooLong:
		return apierror.BadRequest("text_too_long", "A text in the request is longer than its field accepts.").WithCause(err)
	case sqlstateInvalidByteSequence, sqlstateUntranslatable:
		return apierror.BadRequest("invalid_text", "A text in the request is not UTF-8 or contains a NUL character; text must be UTF-8 without NUL characters.").WithCause(err)
	}
	return err
}
