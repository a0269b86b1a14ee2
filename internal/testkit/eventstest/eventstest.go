// Package eventstest reads what the outbox holds, for tests that check the events a write raised.
package eventstest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// BulkEvent is one bulk_operation.* event of an organization's outbox.
type BulkEvent struct {
	Type string
	Data events.BulkOperation
}

// BulkEvents lists org's bulk_operation.* events, oldest first, read through pool as the application reads.
func BulkEvents(t testing.TB, pool *pgxpool.Pool, org uuid.UUID) []BulkEvent {
	t.Helper()
	var out []BulkEvent
	err := db.WithOrgTx(context.Background(), pool, org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT event_type, data FROM event_outbox WHERE organization_id = $1
			AND event_type LIKE 'bulk_operation.%' ORDER BY id`, org)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e BulkEvent
			var raw []byte
			if err := rows.Scan(&e.Type, &raw); err != nil {
				return err
			}
			if err := json.Unmarshal(raw, &e.Data); err != nil {
				return err
			}
			out = append(out, e)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatalf("eventstest: read bulk events: %v", err)
	}
	return out
}
