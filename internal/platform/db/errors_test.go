package db_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
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
		{&pgconn.PgError{Code: "22003"}, 400, "number_out_of_range"},
		{&pgconn.PgError{Code: "22001"}, 400, "text_too_long"},
		{&pgconn.PgError{Code: "22021"}, 400, "invalid_text"},
		{fmt.Errorf("insert: %w", &pgconn.PgError{Code: "22P05"}), 400, "invalid_text"},
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

// TestClassifyInputTurnsValuesPostgresRefusesInto400s sends the values a hostile client would to a real
// Postgres and checks each refusal becomes a 400, while other failures pass through untouched.
func TestClassifyInputTurnsValuesPostgresRefusesInto400s(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	for _, tc := range []struct {
		sql  string
		args []any
		code string
	}{
		{"SELECT $1::int4", []any{int64(1) << 31}, "number_out_of_range"},
		{"SELECT $1::int8::int4", []any{int64(-1) << 63}, "number_out_of_range"},
		{"SELECT $1::text", []any{"a\x00b"}, "invalid_text"},
		{"SELECT $1::text", []any{"a\xffb"}, "invalid_text"},
		{"SELECT $1::jsonb", []any{`{"a":"\u0000"}`}, "invalid_text"},
	} {
		var out any
		err := d.Pool.QueryRow(ctx, tc.sql, tc.args...).Scan(&out)
		require.Error(t, err, tc.sql)
		var e *apierror.Error
		require.ErrorAs(t, db.ClassifyInput(err), &e, "%s: %v", tc.sql, err)
		require.Equal(t, 400, e.Status)
		require.Equal(t, tc.code, e.Code)
	}
	// Only storing text in a shorter column refuses it (a cast truncates).
	tx, err := d.Pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, "CREATE TEMP TABLE short_text (v varchar(3))")
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "INSERT INTO short_text VALUES ($1)", "abcd")
	var e *apierror.Error
	require.ErrorAs(t, db.ClassifyInput(err), &e, "%v", err)
	require.Equal(t, "text_too_long", e.Code)

	other := errors.New("connection reset")
	require.Equal(t, other, db.ClassifyInput(other))
}
