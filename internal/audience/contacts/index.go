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
	// Analyze asks for the table to be analyzed in full once the rows are indexed: the import analyzed the
	// organization column from a small sample (contactimport, contacts_import_settle), which keeps fewer
	// organizations' counts than the full one.
	Analyze bool `json:"analyze,omitempty"`
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

// Work moves the organization's unindexed contacts into the indexes, a batch per transaction in id order
// until none are left, drops the pending ranges that cover none (contact_index_pending), and then settles
// them (contacts_index_settle): the trigram indexes' pending lists merged and, when the import asked or the
// planner takes the organization's indexed contacts for a tenth of what they are or less, the table
// analyzed, so the searches that follow plan as they do once autovacuum has been by. A range whose writer has not committed is
// invisible here and stays; so does one with a row another writer set back meanwhile (each such write
// enqueues its own run).
func (w *IndexWorker) Work(ctx context.Context, job *river.Job[IndexArgs]) error {
	org := job.Args.OrganizationID
	after, moved := uuid.Nil, int64(0)
	for {
		var ids []uuid.UUID
		err := db.WithOrgTx(ctx, w.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
			var err error
			ids, err = queries.ContactIndexBatchPick(ctx, tx, dbq.ContactIndexBatchPickParams{OrganizationID: org, After: after, BatchSize: indexBatch})
			if err != nil {
				return err
			}
			n, err := queries.ContactIndexBatch(ctx, tx, dbq.ContactIndexBatchParams{OrganizationID: org, Ids: ids})
			if err != nil {
				return err
			}
			moved += n
			if len(ids) < indexBatch {
				err = queries.ContactIndexRangesDrop(ctx, tx, org)
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("index contacts: %w", err)
		}
		if len(ids) < indexBatch {
			break
		}
		after = ids[len(ids)-1]
	}
	if moved == 0 {
		return nil
	}
	err := db.WithOrgTx(ctx, w.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		return queries.ContactIndexSettle(ctx, tx, job.Args.Analyze)
	})
	if err != nil {
		return fmt.Errorf("settle contact indexes: %w", err)
	}
	return nil
}
