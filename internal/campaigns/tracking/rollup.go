package tracking

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/internal/analytics/rollup"
)

// recordCounted is record with the analytics rollups kept: under the organization's tracking lock (taken
// first, so no other batch moves the sends in between) it reads what the sends' opens and clicks count, records
// the batch, and counts what it changed (a first open or click, a person's open or click taking a machine-only
// send back, a click re-judged a burst giving one).
func (b *Batcher) recordCounted(ctx context.Context, tx pgx.Tx, org uuid.UUID, evs []Received) error {
	if err := b.queries.TrackingLock(ctx, tx, org); err != nil {
		return err
	}
	ids := make([]uuid.UUID, 0, len(evs))
	seen := make(map[uuid.UUID]bool, len(evs))
	for _, e := range evs {
		if !seen[e.Token.TaskID] {
			seen[e.Token.TaskID] = true
			ids = append(ids, e.Token.TaskID)
		}
	}
	counted, err := rollup.Engaged(ctx, tx, org, ids)
	if err != nil {
		return err
	}
	if err := b.record(ctx, tx, org, evs); err != nil {
		return err
	}
	return counted.Settle(ctx, tx)
}
