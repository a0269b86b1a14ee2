package events

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// Consumer receives every dispatched event inside the dispatch transaction, so what it records (webhook
// deliveries, realtime notifications) commits together with the event being marked dispatched.
type Consumer interface {
	Consume(ctx context.Context, tx pgx.Tx, ev Event) error
}

// Dispatcher hands outbox events to the consumers.
type Dispatcher struct {
	pool      *pgxpool.Pool
	queries   *dbq.Queries
	consumers []Consumer
	timeout   time.Duration
}

// NewDispatcher builds a dispatcher over the application pool for the given consumers; each dispatch is
// limited to HandlerTimeout.
func NewDispatcher(pool *pgxpool.Pool, consumers ...Consumer) *Dispatcher {
	return &Dispatcher{pool: pool, queries: dbq.New(), consumers: consumers, timeout: HandlerTimeout}
}

// WithTimeout replaces HandlerTimeout as the limit of one dispatch (tests of the limit shorten it) and returns
// d; call it before the first dispatch.
func (d *Dispatcher) WithTimeout(timeout time.Duration) *Dispatcher {
	d.timeout = timeout
	return d
}

// Dispatch delivers one event to every consumer and marks it dispatched, all in one transaction limited to the
// dispatcher's timeout; an event already dispatched (a retried job) is skipped, so consumers see each event
// once. A consumer's error or the timeout rolls everything back and fails the attempt.
func (d *Dispatcher) Dispatch(ctx context.Context, args DispatchArgs) error {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	return db.WithOrgTx(ctx, d.pool, args.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		row, err := d.queries.EventGetForDispatch(ctx, tx, dbq.EventGetForDispatchParams{
			OrganizationID: args.OrganizationID, ID: args.EventID,
		})
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // the organization and its events were deleted meanwhile
		}
		if err != nil {
			return fmt.Errorf("load event: %w", err)
		}
		if row.DispatchedAt != nil {
			return nil
		}
		ev := Event{ID: row.ID, OrganizationID: row.OrganizationID, Type: row.EventType, Data: row.Data, CreatedAt: row.CreatedAt}
		for _, c := range d.consumers {
			if err := c.Consume(ctx, tx, ev); err != nil {
				return fmt.Errorf("consume %s: %w", ev.Type, err)
			}
		}
		return d.queries.EventMarkDispatched(ctx, tx, dbq.EventMarkDispatchedParams{
			OrganizationID: args.OrganizationID, ID: args.EventID,
		})
	})
}
