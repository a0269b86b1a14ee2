package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// Event is one outbox row as consumers see it.
type Event struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	Type           string
	Data           json.RawMessage
	CreatedAt      time.Time
}

// DispatchArgs is the River job that fans one event out to the consumers.
type DispatchArgs struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	EventID        uuid.UUID `json:"event_id"`
}

// Kind names the dispatch job in River.
func (DispatchArgs) Kind() string { return "event_dispatch" }

// InsertOpts puts dispatches on the events queue with MaxDispatchAttempts attempts, which ride out a consumer
// outage of a few hours.
func (DispatchArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueName, MaxAttempts: MaxDispatchAttempts}
}

// QueueName is the River queue that carries event dispatches.
const QueueName = "events"

// Inserter is the part of a River client the outbox needs: transactional inserts.
type Inserter interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	InsertManyTx(ctx context.Context, tx pgx.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
}

// Outbox writes events into the caller's transaction.
type Outbox struct {
	jobs    Inserter
	queries *dbq.Queries
}

// NewOutbox builds an outbox that enqueues dispatch jobs through jobs (a River client, insert-only is enough).
func NewOutbox(jobs Inserter) *Outbox {
	return &Outbox{jobs: jobs, queries: dbq.New()}
}

// Jobs is the inserter the outbox enqueues through, for work a hook that was handed only the outbox must
// enqueue in the same transaction (a notification beside an event).
func (o *Outbox) Jobs() Inserter { return o.jobs }

// Emit records an event of eventType (one of the catalog's) with data (any JSON-encodable value) in tx, which must be an
// organization-scoped transaction (db.WithOrgTx): the event belongs to that organization. It returns the
// event id, which stays the same across every delivery attempt.
func (o *Outbox) Emit(ctx context.Context, tx pgx.Tx, eventType Type, data any) (uuid.UUID, error) {
	// webhook.test is the verification challenge, sent to one endpoint only; it never goes through the outbox.
	if _, ok := Lookup(eventType); !ok || eventType == WebhookTest {
		return uuid.Nil, fmt.Errorf("events: %q is not an event of the catalog", eventType)
	}
	org, ok := db.OrgID(ctx)
	if !ok {
		return uuid.Nil, errors.New("events: Emit outside an organization-scoped transaction")
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return uuid.Nil, fmt.Errorf("events: encode %s data: %w", eventType, err)
	}
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.Nil, err
	}
	if err := o.queries.EventInsert(ctx, tx, dbq.EventInsertParams{
		OrganizationID: org, ID: id, EventType: string(eventType), Data: raw,
	}); err != nil {
		return uuid.Nil, fmt.Errorf("events: record %s: %w", eventType, err)
	}
	if _, err := o.jobs.InsertTx(ctx, tx, DispatchArgs{OrganizationID: org, EventID: id}, nil); err != nil {
		return uuid.Nil, fmt.Errorf("events: enqueue dispatch of %s: %w", eventType, err)
	}
	return id, nil
}

// EmitMany records one event of eventType per entry of data in tx, in one statement, and enqueues their
// dispatches in one insert: what a batch of tracked opens raises at once costs two round trips, not two per
// event. tx must be organization-scoped as for Emit. It returns the event ids in the order of data.
func (o *Outbox) EmitMany(ctx context.Context, tx pgx.Tx, eventType Type, data []any) ([]uuid.UUID, error) {
	if _, ok := Lookup(eventType); !ok || eventType == WebhookTest {
		return nil, fmt.Errorf("events: %q is not an event of the catalog", eventType)
	}
	if len(data) == 0 {
		return nil, nil
	}
	org, ok := db.OrgID(ctx)
	if !ok {
		return nil, errors.New("events: EmitMany outside an organization-scoped transaction")
	}
	p := dbq.EventInsertManyParams{OrganizationID: org, EventType: string(eventType)}
	jobs := make([]river.InsertManyParams, 0, len(data))
	for _, d := range data {
		raw, err := json.Marshal(d)
		if err != nil {
			return nil, fmt.Errorf("events: encode %s data: %w", eventType, err)
		}
		id, err := uuid.NewV7()
		if err != nil {
			return nil, err
		}
		p.Ids, p.Data = append(p.Ids, id), append(p.Data, raw)
		jobs = append(jobs, river.InsertManyParams{Args: DispatchArgs{OrganizationID: org, EventID: id}})
	}
	if err := o.queries.EventInsertMany(ctx, tx, p); err != nil {
		return nil, fmt.Errorf("events: record %d %s: %w", len(data), eventType, err)
	}
	if _, err := o.jobs.InsertManyTx(ctx, tx, jobs); err != nil {
		return nil, fmt.Errorf("events: enqueue dispatch of %d %s: %w", len(data), eventType, err)
	}
	return p.Ids, nil
}
