package contacts

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/outflowhq/outflow/db"
)

// IndexArgs asks for an organization's contacts written with search_ready false (imports) to be put into the
// search and sort indexes. Writers enqueue it in the transaction that wrote the rows; each write enqueues its
// own (no uniqueness), so rows committed while a run is finishing are never left behind.
type IndexArgs struct {
	OrganizationID uuid.UUID `json:"organization_id"`
}

// Kind names the job.
func (IndexArgs) Kind() string { return "contacts_index" }

// indexBatch is how many rows one statement moves into the indexes: big enough to amortize, small enough
// that a batch's row locks are short.
const indexBatch = 5000

// IndexWorker runs IndexArgs.
type IndexWorker struct {
	river.WorkerDefaults[IndexArgs]
	Pool *pgxpool.Pool
}

// Work moves the organization's unindexed contacts into the indexes, a batch per transaction, until none
// are left.
func (w *IndexWorker) Work(ctx context.Context, job *river.Job[IndexArgs]) error {
	for {
		var n int64
		err := db.WithOrgTx(ctx, w.Pool, job.Args.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `UPDATE contacts SET search_ready = true
				WHERE organization_id = $1 AND id IN (
				  SELECT id FROM contacts WHERE organization_id = $1 AND NOT search_ready ORDER BY id LIMIT $2)`, job.Args.OrganizationID, indexBatch)
			n = tag.RowsAffected()
			return err
		})
		if err != nil {
			return fmt.Errorf("index contacts: %w", err)
		}
		if n < indexBatch {
			return nil
		}
	}
}
