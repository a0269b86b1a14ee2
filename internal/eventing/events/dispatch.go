package events

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// Consumer receives every dispatched event, once. Each consumer handles an event in a transaction of its own
// that also records its acknowledgement of the event, so what it records (webhook deliveries, a realtime
// notice) commits together with the acknowledgement or not at all, and a retried dispatch does not run a
// consumer that acknowledged: one consumer's failure never repeats another's work.
type Consumer interface {
	// Name identifies the consumer in its acknowledgements (event_consumer_acks.consumer): a lower-case
	// letter, then lower-case letters, digits or underscores, 63 characters at most. It must never change: a
	// renamed consumer counts as a new one and runs again for every event not yet dispatched.
	Name() string
	// Consume handles ev in tx, the consumer's own organization-scoped transaction. An error rolls back what
	// it recorded and its acknowledgement, and the dispatch is retried for this consumer.
	Consume(ctx context.Context, tx pgx.Tx, ev Event) error
}

// consumerName is the shape of a consumer's name, as the acknowledgements table checks it.
var consumerName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

// Dispatcher hands outbox events to the consumers.
type Dispatcher struct {
	pool      *pgxpool.Pool
	queries   *dbq.Queries
	consumers []Consumer
	names     []string
	timeout   time.Duration
}

// NewDispatcher builds a dispatcher over the application pool for the given consumers, run in the order
// given; each dispatch is limited to HandlerTimeout. It panics when a consumer's name is malformed or
// repeated: acknowledgements would then be refused, or shared by two consumers.
func NewDispatcher(pool *pgxpool.Pool, consumers ...Consumer) *Dispatcher {
	d := &Dispatcher{pool: pool, queries: dbq.New(), consumers: consumers, names: make([]string, 0, len(consumers)),
		timeout: HandlerTimeout}
	for _, c := range consumers {
		name := c.Name()
		if !consumerName.MatchString(name) {
			panic(fmt.Sprintf("events: consumer name %q is not %s", name, consumerName))
		}
		if slices.Contains(d.names, name) {
			panic(fmt.Sprintf("events: two consumers are named %q", name))
		}
		d.names = append(d.names, name)
	}
	return d
}

// WithTimeout replaces HandlerTimeout as the limit of one dispatch (tests of the limit shorten it) and returns
// d; call it before the first dispatch.
func (d *Dispatcher) WithTimeout(timeout time.Duration) *Dispatcher {
	d.timeout = timeout
	return d
}

// Dispatch runs one attempt at an event's dispatch, limited to the dispatcher's timeout: each consumer that
// has not acknowledged the event yet handles it in a transaction of its own, whose first statement records
// the acknowledgement, and the event is marked dispatched in the transaction of the last one, once every
// consumer has acknowledged it. The first transaction's claim also reads the event, so n consumers cost n
// transactions. A consumer's failure does not stop the others; the attempt then fails with every failed
// consumer's error, and the retry runs only those. An event already dispatched, or gone (its organization was
// deleted), is skipped.
func (d *Dispatcher) Dispatch(ctx context.Context, args DispatchArgs) error {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	if len(d.consumers) == 0 {
		return db.WithOrgTx(ctx, d.pool, args.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
			return d.mark(ctx, tx, args)
		})
	}
	var (
		ev      Event
		pending []int // the consumers left for transactions of their own, by index
	)
	only := len(d.consumers) == 1
	err := db.WithOrgTx(ctx, d.pool, args.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		row, err := d.claim(ctx, tx, args, 0, only)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // the organization and its events were deleted meanwhile
		}
		if err != nil {
			return err
		}
		if row.DispatchedAt != nil {
			return nil
		}
		ev = Event{ID: row.ID, OrganizationID: row.OrganizationID, Type: row.EventType, Data: row.Data, CreatedAt: row.CreatedAt}
		for i := 1; i < len(d.consumers); i++ {
			if !slices.Contains(row.Acknowledged, d.names[i]) {
				pending = append(pending, i)
			}
		}
		if row.Claimed {
			if err := d.consume(ctx, tx, 0, ev); err != nil {
				return err
			}
		}
		if len(pending) == 0 && !(only && row.Claimed) {
			// Every other consumer acknowledged in earlier runs (a claim that marked needs no mark).
			return d.mark(ctx, tx, args)
		}
		return nil
	})
	if ev.ID == uuid.Nil {
		return err // no event to dispatch, or it could not be read
	}
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	for k, i := range pending {
		last := k == len(pending)-1
		if err := db.WithOrgTx(ctx, d.pool, args.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
			row, err := d.claim(ctx, tx, args, i, last)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			if err != nil {
				return err
			}
			if !row.Claimed {
				// A concurrent run acknowledged for this consumer meanwhile.
				if last {
					return d.mark(ctx, tx, args)
				}
				return nil
			}
			return d.consume(ctx, tx, i, ev)
		}); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// claim records consumer i's acknowledgement of the event in tx unless it has one (row.Claimed says whether
// this transaction holds it) and reads the event; with last, the same statement marks the event dispatched
// when every other consumer has acknowledged it too.
func (d *Dispatcher) claim(ctx context.Context, tx pgx.Tx, args DispatchArgs, i int, last bool) (dbq.EventConsumerClaimRow, error) {
	others := make([]string, 0, len(d.names)-1)
	others = append(append(others, d.names[:i]...), d.names[i+1:]...)
	row, err := d.queries.EventConsumerClaim(ctx, tx, dbq.EventConsumerClaimParams{
		OrganizationID: args.OrganizationID, ID: args.EventID, Consumer: d.names[i], MarkIfComplete: last, Others: others,
	})
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return row, fmt.Errorf("acknowledge event %s for %s: %w", args.EventID, d.names[i], err)
	}
	return row, err
}

// consume runs consumer i on ev in tx, the transaction holding its acknowledgement.
func (d *Dispatcher) consume(ctx context.Context, tx pgx.Tx, i int, ev Event) error {
	if err := d.consumers[i].Consume(ctx, tx, ev); err != nil {
		return fmt.Errorf("consume %s by %s: %w", ev.Type, d.names[i], err)
	}
	return nil
}

// mark marks the event dispatched if every consumer has acknowledged it.
func (d *Dispatcher) mark(ctx context.Context, tx pgx.Tx, args DispatchArgs) error {
	if err := d.queries.EventMarkDispatched(ctx, tx, dbq.EventMarkDispatchedParams{
		OrganizationID: args.OrganizationID, ID: args.EventID, Consumers: d.names,
	}); err != nil {
		return fmt.Errorf("mark event %s dispatched: %w", args.EventID, err)
	}
	return nil
}
