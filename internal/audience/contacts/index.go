package contacts

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	dbq "github.com/outflowhq/outflow/gen/db"
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
			var err error
			if n, err = queries.ContactIndexBatch(ctx, tx, dbq.ContactIndexBatchParams{OrganizationID: job.Args.OrganizationID, BatchSize: indexBatch}); err != nil {
				return err
			}
			if n < indexBatch {
				err = queries.ContactIndexRangesDrop(ctx, tx, job.Args.OrganizationID)
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
