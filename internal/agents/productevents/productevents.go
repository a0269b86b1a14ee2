package productevents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/contacts"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// Bounds of an event: the stored rules (checked first, so a refusal names the field) and how far ahead of the
// clock occurred_at may lie (the clocks of the customer's product drift a little, never by hours).
const (
	maxName  = 255
	maxData  = 64 << 10
	maxAhead = 5 * time.Minute
)

// namePattern is the form of an event name: lowercase words of letters, digits, '_' and '-', joined by dots.
var namePattern = regexp.MustCompile(`^[a-z0-9_-]+(\.[a-z0-9_-]+)*$`)

// Input is one event as the API states it.
type Input struct {
	OrganizationID uuid.UUID
	// Name says what happened (signup.completed).
	Name string
	// ContactID and Email name the contact; at least one is set, and when both are they name the same contact.
	ContactID uuid.NullUUID
	Email     string
	// OccurredAt is when it happened in the product (nil: now).
	OccurredAt *time.Time
	// Data is a JSON object (nil: {}).
	Data json.RawMessage
	// IdempotencyKey records the event once per organization.
	IdempotencyKey string
}

// Recorded is an event as stored, with the waits it resumed (for a replayed key: those the first time resumed).
type Recorded struct {
	Event   dbq.ProductEvent
	Resumed []engine.Resumed
}

// Service records and reads product events; build it with New.
type Service struct {
	pool    *pgxpool.Pool
	queries *dbq.Queries
	now     func() time.Time
}

// New builds the service over the application pool; now is the clock occurred_at is judged by and resumed
// leads are made due at (the deployment's clock, so a test can hold it).
func New(pool *pgxpool.Pool, now func() time.Time) *Service {
	return &Service{pool: pool, queries: dbq.New(), now: now}
}

// Record stores one event and resumes the waits open for it, in one transaction (see the package doc). A
// transaction that lost a deadlock is a 503 the caller may retry, having changed nothing.
func (s *Service) Record(ctx context.Context, in Input) (Recorded, error) {
	now := s.now()
	data, err := in.check(now)
	if err != nil {
		return Recorded{}, err
	}
	occurred := now
	if in.OccurredAt != nil {
		occurred = *in.OccurredAt
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Recorded{}, err
	}
	var out Recorded
	err = db.WithOrgTx(ctx, s.pool, in.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		contact, err := s.contact(ctx, tx, in)
		if err != nil {
			return err
		}
		ev, err := s.queries.ProductEventInsert(ctx, tx, dbq.ProductEventInsertParams{OrganizationID: in.OrganizationID, ID: id,
			ContactID: contact, Name: in.Name, Data: data, OccurredAt: occurred, ReceivedAt: now, IdempotencyKey: in.IdempotencyKey})
		if errors.Is(err, pgx.ErrNoRows) {
			out, err = s.replay(ctx, tx, in, contact, data)
			return err
		}
		if err != nil {
			return storedDataRefused(err)
		}
		out.Event = ev
		if out.Resumed, err = engine.ResumeWaits(ctx, tx, ev.OrganizationID, ev.ContactID, ev.Name, ev.ID, now); err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "product_event.recorded",
			EntityType: audit.EntityProductEvent, EntityID: ev.ID.String(),
			Metadata: map[string]any{"name": ev.Name, "contact_id": ev.ContactID, "matched_waits": len(out.Resumed)}})
	})
	return out, db.Classify(err, "The product event")
}

// check refuses what the event may not hold, naming the field, and answers its data as stored.
func (in Input) check(now time.Time) (json.RawMessage, error) {
	switch {
	case len(in.Name) > maxName:
		return nil, apierror.BadRequest("invalid_name", fmt.Sprintf("name must be at most %d characters.", maxName))
	case !namePattern.MatchString(in.Name):
		return nil, apierror.BadRequest("invalid_name",
			"name must be lowercase words of letters, digits, '_' or '-' joined by dots (such as signup.completed).")
	case !in.ContactID.Valid && strings.TrimSpace(in.Email) == "":
		return nil, apierror.BadRequest("contact_required", "Name the contact by contact_id or email.")
	case in.OccurredAt != nil && in.OccurredAt.After(now.Add(maxAhead)):
		return nil, apierror.BadRequest("invalid_occurred_at", "occurred_at must not be more than 5 minutes in the future.")
	}
	if len(in.Data) == 0 {
		return json.RawMessage(`{}`), nil
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, in.Data); err != nil || compact.Len() == 0 || compact.Bytes()[0] != '{' {
		return nil, apierror.BadRequest("invalid_data", "data must be a JSON object.")
	}
	if compact.Len() > maxData {
		return nil, apierror.BadRequest("data_too_large", fmt.Sprintf("data must be at most 64 KiB of JSON; it is %d bytes.", compact.Len()))
	}
	return compact.Bytes(), nil
}

// contact is the contact the event names: by id (its address must be the email sent beside it), else by address
// (the primary contact holding it).
func (s *Service) contact(ctx context.Context, tx pgx.Tx, in Input) (uuid.UUID, error) {
	email := ""
	if strings.TrimSpace(in.Email) != "" {
		var ok bool
		if email, ok = contacts.NormalizeEmail(in.Email); !ok {
			return uuid.Nil, apierror.BadRequest("invalid_email", "email must be an email address.")
		}
	}
	if in.ContactID.Valid {
		c, err := s.queries.ProductEventContact(ctx, tx, dbq.ProductEventContactParams{OrganizationID: in.OrganizationID, ID: in.ContactID.UUID})
		if errors.Is(err, pgx.ErrNoRows) {
			return uuid.Nil, apierror.NotFound("contact_not_found", "contact_id names no contact of this organization.")
		}
		if err != nil {
			return uuid.Nil, err
		}
		if email != "" && c.Email != email {
			return uuid.Nil, apierror.BadRequest("contact_mismatch",
				"contact_id and email name different contacts; send one of them, or both for the same contact.")
		}
		return c.ID, nil
	}
	id, err := s.queries.ContactIDByEmail(ctx, tx, dbq.ContactIDByEmailParams{OrganizationID: in.OrganizationID, Email: email})
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, apierror.NotFound("contact_not_found",
			"No contact of this organization has that email; events are recorded for existing contacts only.")
	}
	return id, err
}

// replay answers a key the organization already used: the event it recorded, with the waits that event
// resumed, when it is the same event; 422 when the key recorded another one.
func (s *Service) replay(ctx context.Context, tx pgx.Tx, in Input, contact uuid.UUID, data json.RawMessage) (Recorded, error) {
	ev, err := s.queries.ProductEventByKey(ctx, tx, dbq.ProductEventByKeyParams{OrganizationID: in.OrganizationID, IdempotencyKey: in.IdempotencyKey})
	if err != nil {
		return Recorded{}, err
	}
	if ev.Name != in.Name || ev.ContactID != contact || !sameJSON(ev.Data, data) {
		return Recorded{}, apierror.Unprocessable("idempotency_key_reused",
			"This Idempotency-Key already recorded another event. Use a new key for a new event.")
	}
	rows, err := s.queries.ProductEventResumedRuns(ctx, tx, dbq.ProductEventResumedRunsParams{OrganizationID: in.OrganizationID,
		ContactID: contact, EventID: ev.ID})
	if err != nil {
		return Recorded{}, err
	}
	out := Recorded{Event: ev, Resumed: make([]engine.Resumed, len(rows))}
	for i, r := range rows {
		out.Resumed[i] = engine.Resumed{StepRunID: r.ID, CampaignID: r.CampaignID, StepID: r.StepID, ContactID: r.ContactID}
	}
	return out, nil
}

// storedDataRefused names the data's rule when Postgres refused it: jsonb's own text (a space after every ':' and
// ',', numbers written out) can exceed 64 KiB where the JSON sent did not.
func storedDataRefused(err error) error {
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.ConstraintName == "product_events_data_check" {
		return apierror.BadRequest("data_too_large", "data must be at most 64 KiB of JSON as stored.").WithCause(err)
	}
	return err
}

// sameJSON reports whether two JSON texts hold the same value (Postgres's jsonb text orders keys its own way).
func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// Get reads one event; an unknown id is 404 product_event_not_found.
func (s *Service) Get(ctx context.Context, org, id uuid.UUID) (dbq.ProductEvent, error) {
	var ev dbq.ProductEvent
	err := db.WithOrgTx(ctx, s.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		ev, err = s.queries.ProductEventGet(ctx, tx, dbq.ProductEventGetParams{OrganizationID: org, ID: id})
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return ev, apierror.NotFound("product_event_not_found", "No product event with that id in this organization.")
	}
	return ev, err
}

// Filter narrows a list of events; empty fields do not filter.
type Filter struct {
	Name      string
	Email     string
	ContactID uuid.NullUUID
	// Since keeps the events received at or after it.
	Since *time.Time
}

// Query checks a filter and spells it as the list query's arguments (the page position and size left to set).
func (f Filter) Query(org uuid.UUID) (dbq.ProductEventListParams, error) {
	q := dbq.ProductEventListParams{OrganizationID: org, ContactID: f.ContactID, Since: f.Since}
	if f.Name != "" {
		q.Name = &f.Name
	}
	if strings.TrimSpace(f.Email) != "" {
		email, ok := contacts.NormalizeEmail(f.Email)
		if !ok {
			return q, apierror.BadRequest("invalid_email", "The query parameter email must be an email address.")
		}
		q.Email = &email
	}
	return q, nil
}
