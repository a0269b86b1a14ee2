package events

import (
	"context"
	"errors"
	"fmt"

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
}

// NewDispatcher builds a dispatcher over the application pool for the given consumers.
func NewDispatcher(pool *pgxpool.Pool, consumers ...Consumer) *Dispatcher {
	return &Dispatcher{pool: pool, queries: dbq.New(), consumers: consumers}
}

// Dispatch delivers one event to every consumer and marks it dispatched, all in one transaction; an event
// already dispatched (a retried job) is skipped, so consumers see each event once.
func (d *Dispatcher) Dispatch(ctx context.Context, args DispatchArgs) error {
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
