package handlers

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// bulkOperation raises the bulk_operation events of a write that runs in the request (an import, a bulk update
// or delete): started and completed commit with the work in its transaction, so a consumer never sees an
// outcome the database does not hold, and failed is raised in a transaction of its own when the work's
// transaction did not commit.
type bulkOperation struct {
	outbox *events.Outbox
	pool   *pgxpool.Pool
	org    uuid.UUID
	data   events.BulkOperation
}

// newBulkOperation names a new operation of kind (one of the events.Bulk* operations) for org.
func newBulkOperation(outbox *events.Outbox, pool *pgxpool.Pool, org uuid.UUID, kind string) (*bulkOperation, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	return &bulkOperation{outbox: outbox, pool: pool, org: org, data: events.BulkStarted(id, kind, 0, time.Now())}, nil
}

// done raises started (over total contacts) and completed in tx, the work's transaction.
func (b *bulkOperation) done(ctx context.Context, tx pgx.Tx, total, succeeded, failed int64) error {
	b.data.Total = total
	if _, err := b.outbox.Emit(ctx, tx, events.BulkOperationStarted, b.data); err != nil {
		return err
	}
	typ, data := b.data.Finished(succeeded, failed, "", time.Now())
	_, err := b.outbox.Emit(ctx, tx, typ, data)
	return err
}

// failed raises bulk_operation.failed for cause, why the work's transaction did not commit (nothing of the
// operation was written), and returns cause. The event says what a person can act on: a refusal's message,
// or that the server failed.
func (b *bulkOperation) failed(ctx context.Context, cause error) error {
	msg := "The operation failed on the server and changed nothing; try again."
	var e *apierror.Error
	if errors.As(cause, &e) && e.Status < http.StatusInternalServerError {
		msg = e.Message
	}
	_, data := b.data.Finished(0, 0, msg, time.Now())
	err := db.WithOrgTx(context.WithoutCancel(ctx), b.pool, b.org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := b.outbox.Emit(ctx, tx, events.BulkOperationFailed, data)
		return err
	})
	if err != nil {
		return errors.Join(cause, err)
	}
	return cause
}
