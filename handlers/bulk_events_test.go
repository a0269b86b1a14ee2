package handlers_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// bulkEvent is one bulk_operation.* event of an organization's outbox.
type bulkEvent struct {
	Type string
	Data events.BulkOperation
}

// orgBulkEvents lists org's bulk_operation.* events, oldest first.
func orgBulkEvents(t *testing.T, env *apitest.Env, org uuid.UUID) []bulkEvent {
	t.Helper()
	var out []bulkEvent
	require.NoError(t, db.WithOrgTx(context.Background(), env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT event_type, data FROM event_outbox WHERE organization_id = $1
			AND event_type LIKE 'bulk_operation.%' ORDER BY id`, org)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e bulkEvent
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
	}))
	return out
}
