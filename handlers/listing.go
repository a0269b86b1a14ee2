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

// keysetPage reads one page of an organization's list ordered by a keyset K. The cursor, when sent, must have
// been issued for sort; fetch reads rowLimit rows (one more than the page, so the page knows whether more
// follow) after the position (nil on the first page) inside the organization-scoped transaction, and
// position names a row's place for the next cursor.
func keysetPage[T, K any](ctx context.Context, pool *pgxpool.Pool, cursors *pagination.Cursors, org uuid.UUID, sort string,
	cursor api.OptString, limit int, fetch func(ctx context.Context, tx pgx.Tx, after *K, rowLimit int32) ([]T, error),
	position func(T) K,
) (pagination.Page[T], error) {
	var after *K
	if c, ok := cursor.Get(); ok {
		after = new(K)
		if err := cursors.Decode(c, sort, after); err != nil {
			return pagination.Page[T]{}, err
		}
	}
	var rows []T
	err := db.WithOrgTx(ctx, pool, org, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		rows, err = fetch(ctx, tx, after, int32(limit+1))
		return err
	})
	if err != nil {
		return pagination.Page[T]{}, err
	}
	return pagination.Build(cursors, sort, rows, limit, func(r T) any { return position(r) })
}
