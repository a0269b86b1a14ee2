package db

import (
	"errors"

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
)

// Classify maps a Postgres error to an API error once, at the data boundary: no rows is a 404, a unique
// violation a 409, a serialization failure or deadlock a 503 the client may retry. what names the resource
// for the message (for example "API key"). Other errors pass through unchanged and end as 500s.
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
	return err
}
