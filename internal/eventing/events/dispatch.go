package events

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

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
// has not acknowledged the event yet handles it in a transaction of its own, recording its acknowledgement
// there, and the event is marked dispatched in the transaction of the last one, once every consumer has
// acknowledged it. The first transaction also reads the event, so a dispatch with one consumer to run costs
// one transaction. A consumer's failure does not stop the others; the attempt then fails with every
// consumer's error, and the retry runs only the consumers that failed. An event already dispatched, or
// gone (its organization was deleted), is skipped.
func (d *Dispatcher) Dispatch(ctx context.Context, args DispatchArgs) error {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	var (
		ev      Event
		pending []Consumer
		loaded  bool // the event was read and is not dispatched yet
	)
	err := db.WithOrgTx(ctx, d.pool, args.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
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
		ev = Event{ID: row.ID, OrganizationID: row.OrganizationID, Type: row.EventType, Data: row.Data, CreatedAt: row.CreatedAt}
		pending = d.pending(row.Acknowledged)
		loaded = true
		if len(pending) == 0 {
			return d.markDispatched(ctx, tx, ev) // every consumer acknowledged; the run that did was cut short
		}
		return d.consume(ctx, tx, pending[0], ev, len(pending) == 1)
	})
	if !loaded {
		return err
	}
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	for i := 1; i < len(pending); i++ {
		c := pending[i]
		last := i == len(pending)-1
		if err := db.WithOrgTx(ctx, d.pool, args.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
			return d.consume(ctx, tx, c, ev, last)
		}); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// pending lists the consumers not among the acknowledged names, in the dispatcher's order.
func (d *Dispatcher) pending(acknowledged []string) []Consumer {
	out := make([]Consumer, 0, len(d.consumers))
	for i, c := range d.consumers {
		if !slices.Contains(acknowledged, d.names[i]) {
			out = append(out, c)
		}
	}
	return out
}

// consume runs c on ev in tx after recording c's acknowledgement there, and with last also marks the event
// dispatched (which happens only when every consumer has acknowledged). When the acknowledgement exists
// already (a concurrent run of the same event committed it first), c does not run.
func (d *Dispatcher) consume(ctx context.Context, tx pgx.Tx, c Consumer, ev Event, last bool) error {
	claimed, err := d.queries.EventConsumerAck(ctx, tx, dbq.EventConsumerAckParams{
		OrganizationID: ev.OrganizationID, EventID: ev.ID, Consumer: c.Name(),
	})
	if err != nil {
		return fmt.Errorf("acknowledge %s for %s: %w", ev.Type, c.Name(), err)
	}
	if claimed == 1 {
		if err := c.Consume(ctx, tx, ev); err != nil {
			return fmt.Errorf("consume %s by %s: %w", ev.Type, c.Name(), err)
		}
	}
	if last {
		return d.markDispatched(ctx, tx, ev)
	}
	return nil
}

// markDispatched marks ev dispatched if every consumer has acknowledged it.
func (d *Dispatcher) markDispatched(ctx context.Context, tx pgx.Tx, ev Event) error {
	if err := d.queries.EventMarkDispatched(ctx, tx, dbq.EventMarkDispatchedParams{
		OrganizationID: ev.OrganizationID, ID: ev.ID, Consumers: d.names,
	}); err != nil {
		return fmt.Errorf("mark %s dispatched: %w", ev.Type, err)
	}
	return nil
}
