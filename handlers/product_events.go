package handlers

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/agents/productevents"
	"github.com/outflowhq/outflow/internal/platform/pagination"
)

// ProductEvents records what contacts did in the customer's product, resuming the campaign steps waiting for
// it (POST /v1/events: WRITE_EVENTS or manage_campaigns), and reads the events back (READ_CAMPAIGNS or
// view_campaigns); the route table checks both.
type ProductEvents struct {
	events  *productevents.Service
	pool    *pgxpool.Pool
	cursors *pagination.Cursors
	queries *dbq.Queries
}

// NewProductEvents builds the product event operations; list cursors are signed with a key derived from secret.
func NewProductEvents(pool *pgxpool.Pool, events *productevents.Service, secret []byte) *ProductEvents {
	return &ProductEvents{events: events, pool: pool, cursors: pagination.NewCursors(secret), queries: dbq.New()}
}

// Limits of the product event list.
const (
	sortProductEvents    = "product_events:received_at:desc"
	defaultProductEvents = 50
	maxProductEvents     = 200
)

// ProductEventsCreate records one event for a contact and answers 202 with the wait_for_event steps it resumed.
// The Idempotency-Key is required: an event is recorded once per key and organization.
func (h *ProductEvents) ProductEventsCreate(ctx context.Context, req *api.PublishProductEvent, params api.ProductEventsCreateParams) (*api.ProductEventAccepted, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(params.IdempotencyKey) == "" {
		return nil, errIdempotencyKeyRequired
	}
	in := productevents.Input{OrganizationID: org, Name: req.Name, ContactID: nullUUID(req.ContactID), Email: req.Email.Value,
		IdempotencyKey: params.IdempotencyKey}
	if at, ok := req.OccurredAt.Get(); ok {
		in.OccurredAt = &at
	}
	if req.Data.Set {
		if in.Data, err = json.Marshal(req.Data.Value); err != nil {
			return nil, err
		}
	}
	rec, err := h.events.Record(ctx, in)
	if err != nil {
		return nil, err
	}
	out := &api.ProductEventAccepted{EventID: rec.Event.ID, ContactID: rec.Event.ContactID, Name: api.NewOptString(rec.Event.Name),
		ReceivedAt: api.NewOptDateTime(rec.Event.ReceivedAt), MatchedWaits: len(rec.Resumed),
		MatchedRuns: make([]api.ProductEventAcceptedMatchedRunsItem, len(rec.Resumed))}
	for i, r := range rec.Resumed {
		out.MatchedRuns[i] = api.ProductEventAcceptedMatchedRunsItem{RunID: api.NewOptUUID(r.StepRunID),
			CampaignID: api.NewOptUUID(r.CampaignID), StepID: api.NewOptUUID(r.StepID), ContactID: api.NewOptUUID(r.ContactID),
			State: api.NewOptString("resumed"), Mode: api.NewOptProductEventAcceptedMatchedRunsItemMode(api.ProductEventAcceptedMatchedRunsItemModeLive)}
	}
	return out, nil
}

// ProductEventsList lists the organization's events, newest received first, filtered by name, contact (id or
// email) and since (received at or after).
func (h *ProductEvents) ProductEventsList(ctx context.Context, params api.ProductEventsListParams) (*api.ProductEventsListOK, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	limit, err := pagination.Limit(params.Limit.Value, params.Limit.Set, defaultProductEvents, maxProductEvents, true)
	if err != nil {
		return nil, err
	}
	f := productevents.Filter{Name: params.Name.Value, Email: params.Email.Value, ContactID: nullUUID(params.ContactID)}
	if at, ok := params.Since.Get(); ok {
		f.Since = &at
	}
	query, err := f.Query(org)
	if err != nil {
		return nil, err
	}
	page, err := keysetPage(ctx, h.pool, h.cursors, org, sortProductEvents, params.Cursor, limit,
		func(ctx context.Context, tx pgx.Tx, after *timeKey, rowLimit int32) ([]dbq.ProductEvent, error) {
			args := query
			args.BeforeReceivedAt, args.BeforeID = after.bounds()
			args.RowLimit = rowLimit
			return h.queries.ProductEventList(ctx, tx, args)
		},
		func(e dbq.ProductEvent) timeKey { return timeKey{At: e.ReceivedAt, ID: e.ID} })
	if err != nil {
		return nil, err
	}
	out := &api.ProductEventsListOK{Data: make([]api.ProductEvent, len(page.Data))}
	for i, e := range page.Data {
		out.Data[i] = productEventAPI(e)
	}
	info := api.ProductEventsListOKPagination{HasMore: api.NewOptBool(page.HasMore)}
	if page.NextCursor != nil {
		info.NextCursor = api.NewOptString(*page.NextCursor)
	}
	out.Pagination = api.NewOptProductEventsListOKPagination(info)
	return out, nil
}

// ProductEventsGet reads one event.
func (h *ProductEvents) ProductEventsGet(ctx context.Context, params api.ProductEventsGetParams) (*api.ProductEvent, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	e, err := h.events.Get(ctx, org, params.ID)
	if err != nil {
		return nil, err
	}
	out := productEventAPI(e)
	return &out, nil
}

// productEventAPI maps a stored event.
func productEventAPI(e dbq.ProductEvent) api.ProductEvent {
	out := api.ProductEvent{ID: e.ID, OrganizationID: api.NewOptUUID(e.OrganizationID), ContactID: e.ContactID, Name: e.Name,
		OccurredAt: e.OccurredAt, ReceivedAt: e.ReceivedAt}
	if data, ok := objectAPI[api.ProductEventData](e.Data); ok {
		out.Data = api.NewOptProductEventData(data)
	}
	return out
}
