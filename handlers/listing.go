package handlers

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/pagination"
)

// timeKey is the keyset position of lists ordered by a timestamp and an id.
type timeKey struct {
	At time.Time `json:"t"`
	ID uuid.UUID `json:"i"`
}

// bounds spells a position as a query's optional (timestamp, id) parameters: both NULL on the first page.
func (k *timeKey) bounds() (*time.Time, uuid.NullUUID) {
	if k == nil {
		return nil, uuid.NullUUID{}
	}
	return &k.At, uuid.NullUUID{UUID: k.ID, Valid: true}
}

// nameKey is the keyset position of lists ordered by name and id.
type nameKey struct {
	Name string    `json:"n"`
	ID   uuid.UUID `json:"i"`
}

// bounds spells a position as a query's optional (name, id) parameters: both NULL on the first page.
func (k *nameKey) bounds() (*string, uuid.NullUUID) {
	if k == nil {
		return nil, uuid.NullUUID{}
	}
	return &k.Name, uuid.NullUUID{UUID: k.ID, Valid: true}
}

// keysetAfter decodes a list's cursor, when sent, into the position K after which its page starts (nil on the
// first page). The cursor must have been issued for sort.
func keysetAfter[K any](cursors *pagination.Cursors, sort string, cursor api.OptString) (*K, error) {
	c, ok := cursor.Get()
	if !ok {
		return nil, nil
	}
	after := new(K)
	if err := cursors.Decode(c, sort, after); err != nil {
		return nil, err
	}
	return after, nil
}

// keysetPage reads one page of an organization's list ordered by a keyset K. The cursor, when sent, must have
// been issued for sort; fetch reads rowLimit rows (one more than the page, so the page knows whether more
// follow) after the position (nil on the first page) inside the organization-scoped transaction, and
// position names a row's place for the next cursor.
func keysetPage[T, K any](ctx context.Context, pool *pgxpool.Pool, cursors *pagination.Cursors, org uuid.UUID, sort string,
	cursor api.OptString, limit int, fetch func(ctx context.Context, tx pgx.Tx, after *K, rowLimit int32) ([]T, error),
	position func(T) K,
) (pagination.Page[T], error) {
	return keysetPageThen(ctx, pool, cursors, org, sort, cursor, limit, fetch, position, nil)
}

// keysetPageThen is keysetPage for lists whose mapping reads more rows (contact views, a segment's counts, a
// first page's totals): then runs on the page's rows in the same transaction; first is true on the first page.
func keysetPageThen[T, K any](ctx context.Context, pool *pgxpool.Pool, cursors *pagination.Cursors, org uuid.UUID, sort string,
	cursor api.OptString, limit int, fetch func(ctx context.Context, tx pgx.Tx, after *K, rowLimit int32) ([]T, error),
	position func(T) K, then func(ctx context.Context, tx pgx.Tx, rows []T, first bool) error,
) (pagination.Page[T], error) {
	after, err := keysetAfter[K](cursors, sort, cursor)
	if err != nil {
		return pagination.Page[T]{}, err
	}
	rows, hasMore, err := keysetRows(ctx, pool, org, limit,
		func(ctx context.Context, tx pgx.Tx, rowLimit int32) ([]T, error) {
			return fetch(ctx, tx, after, rowLimit)
		},
		func(ctx context.Context, tx pgx.Tx, rows []T) error {
			if then == nil {
				return nil
			}
			return then(ctx, tx, rows, after == nil)
		})
	if err != nil {
		return pagination.Page[T]{}, err
	}
	page := pagination.Page[T]{Data: rows, HasMore: hasMore}
	if hasMore {
		next, err := cursors.Encode(sort, position(rows[len(rows)-1]))
		if err != nil {
			return pagination.Page[T]{}, err
		}
		page.NextCursor = &next
	}
	return page, nil
}

// keysetRows reads one page of an organization's list in an organization-scoped transaction: fetch reads
// rowLimit rows after the caller's position (one more than the page, so the page knows whether more follow),
// the rows past limit are cut, and then, when set, runs on the page's rows in the same transaction. Lists
// whose cursor the contract fixes (an entry's id, a before_at/before_id pair) page with it directly; the
// others go through keysetPage and its signed cursors.
func keysetRows[T any](ctx context.Context, pool *pgxpool.Pool, org uuid.UUID, limit int,
	fetch func(ctx context.Context, tx pgx.Tx, rowLimit int32) ([]T, error), then func(ctx context.Context, tx pgx.Tx, rows []T) error,
) (rows []T, hasMore bool, err error) {
	err = db.WithOrgTx(ctx, pool, org, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		if rows, err = fetch(ctx, tx, int32(limit+1)); err != nil {
			return err
		}
		if hasMore = len(rows) > limit; hasMore {
			rows = rows[:limit]
		}
		if then == nil {
			return nil
		}
		return then(ctx, tx, rows)
	})
	if err != nil {
		return nil, false, err
	}
	return rows, hasMore, nil
}
