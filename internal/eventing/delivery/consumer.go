package delivery

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

// Inserter is the part of a River client delivery needs: transactional inserts of attempt jobs.
type Inserter interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// Limits are the webhook rate limits, counted in fixed one-minute windows. An event over a limit gets no
// delivery; it is counted in webhook_throttle_drops instead.
type Limits struct {
	// EndpointPerMinute is how many events one endpoint receives per minute, all types together.
	EndpointPerMinute int
	// OrgEventTypePerMinute is how many events of one type an organization dispatches to webhooks per minute;
	// it guards the platform against a runaway producer before any endpoint is considered.
	OrgEventTypePerMinute int
}

// DefaultLimits: 600 events a minute per endpoint (10 a second, sustained, is more than a typical receiver
// handles and far more than any non-firehose type produces), and 6,000 a minute per organization and event
// type (ten endpoints' worth).
var DefaultLimits = Limits{EndpointPerMinute: 600, OrgEventTypePerMinute: 6000}

// RateWindow is the length of a rate-limit window.
const RateWindow = time.Minute

// rateShards is how many rows one limit's window is counted in (see webhook_rate_windows).
const rateShards = 16

// The throttle_drops reasons, as the API names them.
const (
	ReasonEndpointRateLimit    = "endpoint_rate_limit"
	ReasonOrgEventTypeThrottle = "org_event_type_throttle"
)

// ConsumerName is the webhook consumer's name among the event consumers, in its acknowledgements.
const ConsumerName = "webhooks"

// Consumer turns dispatched events into pending deliveries (an events.Consumer).
type Consumer struct {
	jobs    Inserter
	limits  Limits
	now     func() time.Time
	queries *dbq.Queries
}

// ConsumerOptions configure a Consumer; zero values take the defaults.
type ConsumerOptions struct {
	// Limits replaces DefaultLimits (benchmarks lift them; tests lower them).
	Limits Limits
	// Now is the clock of rate windows and first attempts; nil means time.Now.
	Now func() time.Time
}

// NewConsumer builds the consumer the event dispatcher calls; jobs (a River client, insert-only is enough)
// enqueues the first attempt of each delivery in the consumer's transaction of the event's dispatch.
func NewConsumer(jobs Inserter, opts ConsumerOptions) *Consumer {
	c := &Consumer{jobs: jobs, limits: opts.Limits, now: opts.Now, queries: dbq.New()}
	if c.limits.EndpointPerMinute <= 0 {
		c.limits.EndpointPerMinute = DefaultLimits.EndpointPerMinute
	}
	if c.limits.OrgEventTypePerMinute <= 0 {
		c.limits.OrgEventTypePerMinute = DefaultLimits.OrgEventTypePerMinute
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c
}

var _ events.Consumer = (*Consumer)(nil)

// Name is ConsumerName.
func (c *Consumer) Name() string { return ConsumerName }

// Consume records one pending delivery (and its first attempt's job) per endpoint of the event's organization
// that wants the event, within the limits. It runs in its own transaction of the event's dispatch, beside its
// acknowledgement, so it runs once per event; and a delivery is keyed by (endpoint, event), so one that
// already exists is left alone whatever calls Consume again.
func (c *Consumer) Consume(ctx context.Context, tx pgx.Tx, ev events.Event) error {
	info, ok := events.Lookup(events.Type(ev.Type))
	if !ok || info.Type == events.WebhookTest {
		return nil
	}
	org := ev.OrganizationID
	endpoints, err := c.queries.WebhookEndpointListForDispatch(ctx, tx, org)
	if err != nil {
		return fmt.Errorf("list webhook endpoints: %w", err)
	}
	if len(endpoints) == 0 {
		return nil
	}
	targets := endpoints[:0]
	for _, e := range endpoints {
		want, err := c.wants(ctx, tx, e, info)
		if err != nil {
			return err
		}
		if want {
			targets = append(targets, e)
		}
	}
	if len(targets) == 0 {
		return nil
	}

	now := c.now()
	window := now.UTC().Truncate(RateWindow)
	ids := make([]uuid.UUID, len(targets))
	for i, e := range targets {
		ids[i] = e.ID
	}
	counts, err := c.queries.WebhookRateHit(ctx, tx, dbq.WebhookRateHitParams{
		OrganizationID: org, EventType: ev.Type, EndpointIds: ids, WindowStart: window, Shard: int16(rand.N(rateShards)),
	})
	if err != nil {
		return fmt.Errorf("count webhook rates: %w", err)
	}
	hits := make(map[uuid.UUID]int, len(counts))
	for _, h := range counts {
		hits[h.EndpointID] = int(h.Hits)
	}
	if hits[uuid.Nil] > c.limits.OrgEventTypePerMinute {
		return c.drop(ctx, tx, org, uuid.NullUUID{}, ev.Type, ReasonOrgEventTypeThrottle, window, now)
	}
	for _, e := range targets {
		if hits[e.ID] > c.limits.EndpointPerMinute {
			if err := c.drop(ctx, tx, org, uuid.NullUUID{UUID: e.ID, Valid: true}, ev.Type, ReasonEndpointRateLimit, window, now); err != nil {
				return err
			}
			continue
		}
		id, err := uuid.NewV7()
		if err != nil {
			return err
		}
		_, err = c.queries.WebhookDeliveryCreate(ctx, tx, dbq.WebhookDeliveryCreateParams{
			OrganizationID: org, ID: id, EndpointID: e.ID, EventID: ev.ID, EventType: ev.Type,
			NextAttemptAt: now, SecretGeneration: e.SecretGeneration, MaxAttempts: MaxAttempts,
		})
		if errors.Is(err, pgx.ErrNoRows) {
			continue // this event already has its delivery to this endpoint
		}
		if err != nil {
			return fmt.Errorf("record delivery: %w", err)
		}
		if _, err := c.jobs.InsertTx(ctx, tx, AttemptArgs{OrganizationID: org, DeliveryID: id}, nil); err != nil {
			return fmt.Errorf("enqueue delivery attempt: %w", err)
		}
	}
	return nil
}

// wants reports whether endpoint e receives events of info's type.
func (c *Consumer) wants(ctx context.Context, tx pgx.Tx, e dbq.WebhookEndpointListForDispatchRow, info events.Info) (bool, error) {
	if !e.OauthClientID.Valid {
		return subscribed(e.EventTypes, info), nil
	}
	// An OAuth app's managed endpoint: the app's declared events decide (the endpoint's own list narrows them
	// further when set), and the organization's live grant must hold the family's scope.
	if len(e.EventTypes) > 0 && !slices.Contains(e.EventTypes, string(info.Type)) {
		return false, nil
	}
	if !e.HasGrant || info.Scope == 0 {
		return false, nil
	}
	app, err := c.queries.WebhookAppGet(ctx, tx, e.OauthClientID.UUID)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("load OAuth app: %w", err)
	}
	if app.WebhookUrl == "" {
		return false, nil // the app opted out of webhooks
	}
	granted := auth.Permission(e.GrantScopes) & auth.Permission(app.Scopes)
	if !granted.Has(info.Scope) {
		return false, nil
	}
	return subscribed(app.WebhookEvents, info), nil
}

// subscribed applies an event type list: empty means every non-firehose event; a firehose event must be
// listed.
func subscribed(types []string, info events.Info) bool {
	if len(types) == 0 {
		return !info.Firehose
	}
	return slices.Contains(types, string(info.Type))
}

// drop counts one suppressed event in its window's drop record.
func (c *Consumer) drop(ctx context.Context, tx pgx.Tx, org uuid.UUID, endpoint uuid.NullUUID, eventType, reason string, window, now time.Time) error {
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	if err := c.queries.WebhookThrottleDropRecord(ctx, tx, dbq.WebhookThrottleDropRecordParams{
		OrganizationID: org, ID: id, EndpointID: endpoint, EventType: eventType, Reason: reason,
		WindowStart: window, WindowEnd: window.Add(RateWindow), Now: now,
	}); err != nil {
		return fmt.Errorf("record throttle drop: %w", err)
	}
	return nil
}
