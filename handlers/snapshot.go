package handlers

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// snapshot begins read-only transactions at REPEATABLE READ, for reads that must agree with each other: an
// export's count and every batch (a file never mixes states of a list that changes while it downloads), the
// notification feed and its unread count.
type snapshot struct{ pool *pgxpool.Pool }

// Begin starts one such transaction (snapshot is the db.Beginner handed to db.WithTx or db.WithOrgTx).
func (s snapshot) Begin(ctx context.Context) (pgx.Tx, error) {
	return s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
}
