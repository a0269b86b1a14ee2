package contacts

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/outflowhq/outflow/internal/platform/db"
)

// IndexArgs asks for an organization's contacts written with search_ready false (imports, which record where
// those rows are in contact_index_pending) to be put into the search and sort indexes. Writers enqueue it in
// the transaction that wrote the rows; each write enqueues its own (no uniqueness), so rows committed while
// a run is finishing are never left behind.
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
// are left, and then drops the pending ranges that cover none (contact_index_pending). A range whose writer
// has not committed is invisible here and stays; so does one with a row another writer set back meanwhile.
func (w *IndexWorker) Work(ctx context.Context, job *river.Job[IndexArgs]) error {
	for {
		var n int64
		err := db.WithOrgTx(ctx, w.Pool, job.Args.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `UPDATE contacts SET search_ready = true
				WHERE organization_id = $1 AND NOT search_ready AND id = ANY(ARRAY(
				  SELECT id FROM contacts_pending($1) ORDER BY id LIMIT $2))`, job.Args.OrganizationID, indexBatch)
			if err != nil {
				return err
			}
			if n = tag.RowsAffected(); n < indexBatch {
				_, err = tx.Exec(ctx, `DELETE FROM contact_index_pending p WHERE p.organization_id = $1 AND NOT EXISTS (
				  SELECT 1 FROM contacts c WHERE c.organization_id = p.organization_id AND c.id BETWEEN p.lo AND p.hi AND NOT c.search_ready)`,
					job.Args.OrganizationID)
			}
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
