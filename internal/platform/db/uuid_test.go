package db_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/testkit/dbtest"
)

func TestUUIDsRoundTrip(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	a, b := uuid.New(), uuid.New()

	var one uuid.UUID
	require.NoError(t, d.Pool.QueryRow(ctx, `SELECT $1::uuid`, a).Scan(&one))
	require.Equal(t, a, one)
	var text string
	require.NoError(t, d.Pool.QueryRow(ctx, `SELECT $1::uuid::text`, a).Scan(&text))
	require.Equal(t, a.String(), text, "the bytes arrive as sent")

	var many []uuid.UUID
	require.NoError(t, d.Pool.QueryRow(ctx, `SELECT $1::uuid[]`, []uuid.UUID{a, b}).Scan(&many))
	require.Equal(t, []uuid.UUID{a, b}, many)
	var n int
	require.NoError(t, d.Pool.QueryRow(ctx, `SELECT count(*) FROM unnest($1::uuid[]) x WHERE x = ANY($2)`, []uuid.UUID{a, b}, []uuid.UUID{b}).Scan(&n))
	require.Equal(t, 1, n)

	var null uuid.NullUUID
	require.NoError(t, d.Pool.QueryRow(ctx, `SELECT NULL::uuid`).Scan(&null))
	require.False(t, null.Valid)
	var ptr *uuid.UUID
	require.NoError(t, d.Pool.QueryRow(ctx, `SELECT NULL::uuid`).Scan(&ptr))
	require.Nil(t, ptr)
	require.NoError(t, d.Pool.QueryRow(ctx, `SELECT $1::uuid`, b).Scan(&ptr))
	require.Equal(t, b, *ptr)
}

// BenchmarkUUIDArray compares sending and reading back 1,000 ids as []uuid.UUID with the same ids as
// pgtype.UUID values (pgx's native binary form). registerUUID took the uuid.UUID round trip from 4.9x to
// 1.5-1.9x of the native one; what is left is scanning through uuid.UUID's sql.Scanner.
func BenchmarkUUIDArray(b *testing.B) {
	d := dbtest.New(b)
	ctx := context.Background()
	ids := make([]uuid.UUID, 1000)
	native := make([]pgtype.UUID, len(ids))
	for i := range ids {
		ids[i] = uuid.New()
		native[i] = pgtype.UUID{Bytes: ids[i], Valid: true}
	}
	run := func(b *testing.B, arg, dst any) {
		for b.Loop() {
			if err := d.Pool.QueryRow(ctx, `SELECT $1::uuid[]`, pgx.QueryExecModeCacheDescribe, arg).Scan(dst); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("baseline", func(b *testing.B) {
		var out []pgtype.UUID
		run(b, native, &out)
	})
	b.Run("outflow", func(b *testing.B) {
		var out []uuid.UUID
		run(b, ids, &out)
	})
}
