package db_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
)

func TestClassifyMapsPostgresErrorsOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err    error
		status int
		code   string
	}{
		{fmt.Errorf("get: %w", pgx.ErrNoRows), 404, "not_found"},
		{&pgconn.PgError{Code: "23505"}, 409, "already_exists"},
		{&pgconn.PgError{Code: "23503"}, 409, "still_referenced"},
		{&pgconn.PgError{Code: "40001"}, 503, "retry"},
		{&pgconn.PgError{Code: "40P01"}, 503, "retry"},
	} {
		var e *apierror.Error
		require.ErrorAs(t, db.Classify(tc.err, "Webhook"), &e)
		require.Equal(t, tc.status, e.Status)
		require.Equal(t, tc.code, e.Code)
		require.NotContains(t, e.Message, "2350", "no SQLSTATE in client messages")
	}
	require.Nil(t, db.Classify(nil, "x"))
	other := errors.New("connection reset")
	require.Equal(t, other, db.Classify(other, "x"), "unknown errors pass through to become 500s")
	require.Equal(t, "Webhook not found.", apierror.From(db.Classify(pgx.ErrNoRows, "Webhook")).Message)
}
