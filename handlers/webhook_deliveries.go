package handlers

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/delivery"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/pagination"
)

// WebhookDeliveries serves what webhook delivery leaves to inspect and act on: the organization's and one
// endpoint's deliveries, redelivery, the throttle drops, and an OAuth app's deliveries across the
// organizations that authorized it. The deliveries themselves are made by package delivery.
type WebhookDeliveries struct {
	pool    *pgxpool.Pool
	jobs    delivery.Inserter
	cursors *pagination.Cursors
	queries *dbq.Queries
	now     func() time.Time
}

// NewWebhookDeliveries builds the delivery handlers; jobs (the process's River client) enqueues redeliveries
// in the redelivering transaction, secret keys the list cursors.
func NewWebhookDeliveries(pool *pgxpool.Pool, jobs delivery.Inserter, secret []byte) *WebhookDeliveries {
	return &WebhookDeliveries{pool: pool, jobs: jobs, cursors: pagination.NewCursors(secret), queries: dbq.New(), now: time.Now}
}

// Page sizes of the delivery lists (part 1, Limits): 1 to 200, default 50, out of range refused.
const (
	deliveryLimitDefault = 50
	deliveryLimitMax     = 200
)

// Sort names the cursors of the lists are issued for.
const (
	sortWebhookDeliveries    = "webhook_deliveries:created_at:desc"
	sortAppWebhookDeliveries = "oauth_app_webhook_deliveries:created_at:desc"
	sortWebhookThrottleDrops = "webhook_throttle_drops:window_start:desc"
)

// deliveryRow is a delivery with the event its payload is built from (nil data when the event is gone).
type deliveryRow struct {
	d       dbq.WebhookDelivery
	data    []byte
	eventAt *time.Time
}

func deliveryPosition(r deliveryRow) timeKey { return timeKey{At: r.d.CreatedAt, ID: r.d.ID} }

// deliveryFilters are the optional status and event_type filters of every delivery list.
func deliveryFilters(status api.OptWebhookDeliveryStatus, eventType api.OptWebhookEventType) (*string, *string) {
	var s, e *string
	if v, ok := status.Get(); ok {
		str := string(v)
		s = &str
	}
	if v, ok := eventType.Get(); ok {
		str := string(v)
		e = &str
	}
	return s, e
}

// WebhooksListOrgDeliveries lists the deliveries of every endpoint of the organization, newest first.
func (h *WebhookDeliveries) WebhooksListOrgDeliveries(ctx context.Context, params api.WebhooksListOrgDeliveriesParams) (*api.WebhookDeliveryPage, error) {
	org, err := webhooksCaller(ctx)
	if err != nil {
		return nil, err
	}
	limit, err := pagination.Limit(params.Limit.Value, params.Limit.Set, deliveryLimitDefault, deliveryLimitMax, true)
	if err != nil {
		return nil, err
	}
	status, eventType := deliveryFilters(params.Status, params.EventType)
	page, err := keysetPage(ctx, h.pool, h.cursors, org, sortWebhookDeliveries, params.Cursor, limit,
		func(ctx context.Context, tx pgx.Tx, after *timeKey, rowLimit int32) ([]deliveryRow, error) {
			args := dbq.WebhookDeliveryListByOrgParams{OrganizationID: org, Status: status, EventType: eventType, RowLimit: rowLimit}
			args.BeforeCreatedAt, args.BeforeID = after.bounds()
			rows, err := h.queries.WebhookDeliveryListByOrg(ctx, tx, args)
			out := make([]deliveryRow, len(rows))
			for i, r := range rows {
				out[i] = deliveryRow{d: r.WebhookDelivery, data: r.EventData, eventAt: r.EventCreatedAt}
			}
			return out, err
		}, deliveryPosition)
	if err != nil {
		return nil, err
	}
	return deliveryPage(page), nil
}

// WebhooksListDeliveries lists one endpoint's deliveries, newest first; an endpoint of another organization
// is unknown.
func (h *WebhookDeliveries) WebhooksListDeliveries(ctx context.Context, params api.WebhooksListDeliveriesParams) (*api.WebhookDeliveryPage, error) {
	org, err := webhooksCaller(ctx)
	if err != nil {
		return nil, err
	}
	limit, err := pagination.Limit(params.Limit.Value, params.Limit.Set, deliveryLimitDefault, deliveryLimitMax, true)
	if err != nil {
		return nil, err
	}
	status, eventType := deliveryFilters(params.Status, params.EventType)
	page, err := keysetPage(ctx, h.pool, h.cursors, org, sortWebhookDeliveries, params.Cursor, limit,
		func(ctx context.Context, tx pgx.Tx, after *timeKey, rowLimit int32) ([]deliveryRow, error) {
			if _, err := h.queries.WebhookEndpointExists(ctx, tx, dbq.WebhookEndpointExistsParams{OrganizationID: org, ID: params.ID}); err != nil {
				return nil, db.Classify(err, "Webhook endpoint")
			}
			args := dbq.WebhookDeliveryListByEndpointParams{OrganizationID: org, EndpointID: params.ID, Status: status,
				EventType: eventType, RowLimit: rowLimit}
			args.BeforeCreatedAt, args.BeforeID = after.bounds()
			rows, err := h.queries.WebhookDeliveryListByEndpoint(ctx, tx, args)
			out := make([]deliveryRow, len(rows))
			for i, r := range rows {
				out[i] = deliveryRow{d: r.WebhookDelivery, data: r.EventData, eventAt: r.EventCreatedAt}
			}
			return out, err
		}, deliveryPosition)
	if err != nil {
		return nil, err
	}
	return deliveryPage(page), nil
}

// WebhooksRedeliver starts a new attempt lifecycle for a delivery, whatever its status: pending, no attempts
// yet, the same event id, signed with the endpoint's current secret; its first attempt is enqueued with the
// change.
func (h *WebhookDeliveries) WebhooksRedeliver(ctx context.Context, params api.WebhooksRedeliverParams) (*api.WebhookDelivery, error) {
	org, err := webhooksCaller(ctx)
	if err != nil {
		return nil, err
	}
	var row dbq.WebhookDeliveryGetRow
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		n, err := h.queries.WebhookDeliveryRedeliver(ctx, tx, dbq.WebhookDeliveryRedeliverParams{
			OrganizationID: org, ID: params.DeliveryId, Now: h.now(),
		})
		if err != nil {
			return err
		}
		if n == 0 {
			return apierror.NotFound("not_found", "Webhook delivery not found.")
		}
		if _, err := h.jobs.InsertTx(ctx, tx, delivery.AttemptArgs{OrganizationID: org, DeliveryID: params.DeliveryId}, nil); err != nil {
			return err
		}
		row, err = h.queries.WebhookDeliveryGet(ctx, tx, dbq.WebhookDeliveryGetParams{OrganizationID: org, ID: params.DeliveryId})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := deliveryOf(deliveryRow{d: row.WebhookDelivery, data: row.EventData, eventAt: row.EventCreatedAt})
	return &out, nil
}

// WebhooksListThrottleDrops lists the events the rate limits suppressed, per window, newest window first,
// with the total over the whole range and filters.
func (h *WebhookDeliveries) WebhooksListThrottleDrops(ctx context.Context, params api.WebhooksListThrottleDropsParams) (*api.WebhookThrottleDropList, error) {
	org, err := webhooksCaller(ctx)
	if err != nil {
		return nil, err
	}
	limit, err := pagination.Limit(params.Limit.Value, params.Limit.Set, deliveryLimitDefault, deliveryLimitMax, true)
	if err != nil {
		return nil, err
	}
	to := params.To.Or(h.now())
	from := params.From.Or(to.Add(-24 * time.Hour))
	if !from.Before(to) {
		return nil, apierror.BadRequest("invalid_range", "from must be before to.")
	}
	var eventType, reason *string
	if v, ok := params.EventType.Get(); ok {
		s := string(v)
		eventType = &s
	}
	if v, ok := params.Reason.Get(); ok {
		s := string(v)
		reason = &s
	}
	var total int64
	page, err := keysetPage(ctx, h.pool, h.cursors, org, sortWebhookThrottleDrops, params.Cursor, limit,
		func(ctx context.Context, tx pgx.Tx, after *timeKey, rowLimit int32) ([]dbq.WebhookThrottleDropListRow, error) {
			var err error
			total, err = h.queries.WebhookThrottleDropTotal(ctx, tx, dbq.WebhookThrottleDropTotalParams{
				OrganizationID: org, FromAt: from, ToAt: to, EventType: eventType, Reason: reason,
			})
			if err != nil {
				return nil, err
			}
			args := dbq.WebhookThrottleDropListParams{OrganizationID: org, FromAt: from, ToAt: to, EventType: eventType,
				Reason: reason, RowLimit: rowLimit}
			args.BeforeWindowStart, args.BeforeID = after.bounds()
			return h.queries.WebhookThrottleDropList(ctx, tx, args)
		},
		func(r dbq.WebhookThrottleDropListRow) timeKey { return timeKey{At: r.WindowStart, ID: r.ID} })
	if err != nil {
		return nil, err
	}
	out := &api.WebhookThrottleDropList{From: from, To: to, TotalDropped: int(total),
		Data: make([]api.WebhookThrottleDrop, len(page.Data)), Pagination: orgPageInfo(page)}
	for i, r := range page.Data {
		d := api.WebhookThrottleDrop{EventType: api.WebhookEventType(r.EventType), Reason: api.WebhookThrottleDropReason(r.Reason),
			Dropped: int(r.Dropped), WindowStart: r.WindowStart, WindowEnd: r.WindowEnd, LastDroppedAt: api.NewOptDateTime(r.LastDroppedAt)}
		d.EndpointID.SetToNull()
		if r.EndpointID.Valid {
			d.EndpointID.SetTo(r.EndpointID.UUID)
		}
		out.Data[i] = d
	}
	return out, nil
}

// OAuthApplicationsListWebhookDeliveries lists the deliveries to every managed endpoint of an app of the
// caller's organization, across the organizations that authorized it, newest first; each row names its
// organization. It belongs to the OAuth operation group but lives with the other delivery lists.
func (h *WebhookDeliveries) OAuthApplicationsListWebhookDeliveries(ctx context.Context, params api.OAuthApplicationsListWebhookDeliveriesParams) (*api.WebhookDeliveryPage, error) {
	org, err := teamCaller(ctx, auth.APIKeys, "API_KEYS", auth.ManageAPIKeys)
	if err != nil {
		return nil, err
	}
	limit, err := pagination.Limit(params.Limit.Value, params.Limit.Set, deliveryLimitDefault, deliveryLimitMax, true)
	if err != nil {
		return nil, err
	}
	status, eventType := deliveryFilters(params.Status, params.EventType)
	page, err := keysetPage(ctx, h.pool, h.cursors, org, sortAppWebhookDeliveries, params.Cursor, limit,
		func(ctx context.Context, tx pgx.Tx, after *timeKey, rowLimit int32) ([]deliveryRow, error) {
			if _, err := h.queries.OAuthApplicationGet(ctx, tx, dbq.OAuthApplicationGetParams{OrganizationID: org, ID: params.ID}); err != nil {
				return nil, db.Classify(err, "OAuth application")
			}
			args := dbq.WebhookAppDeliveryListParams{ClientID: params.ID, Status: status, EventType: eventType, RowLimit: rowLimit}
			args.BeforeCreatedAt, args.BeforeID = after.bounds()
			rows, err := h.queries.WebhookAppDeliveryList(ctx, tx, args)
			if err != nil || len(rows) == 0 {
				return nil, err
			}
			orgs, ids := make([]uuid.UUID, len(rows)), make([]uuid.UUID, len(rows))
			for i, r := range rows {
				orgs[i], ids[i] = r.OrganizationID, r.EventID
			}
			evs, err := h.queries.WebhookAppEventList(ctx, tx, dbq.WebhookAppEventListParams{ClientID: params.ID, OrganizationIds: orgs, EventIds: ids})
			if err != nil {
				return nil, err
			}
			type eventKey struct{ org, id uuid.UUID }
			byKey := make(map[eventKey]dbq.EventOutbox, len(evs))
			for _, e := range evs {
				byKey[eventKey{e.OrganizationID, e.ID}] = e
			}
			out := make([]deliveryRow, len(rows))
			for i, r := range rows {
				out[i] = deliveryRow{d: r}
				if e, ok := byKey[eventKey{r.OrganizationID, r.EventID}]; ok {
					out[i].data, out[i].eventAt = e.Data, &e.CreatedAt
				}
			}
			return out, nil
		}, deliveryPosition)
	if err != nil {
		return nil, err
	}
	return deliveryPage(page), nil
}

// deliveryPage maps a page of deliveries.
func deliveryPage(page pagination.Page[deliveryRow]) *api.WebhookDeliveryPage {
	out := &api.WebhookDeliveryPage{Data: make([]api.WebhookDelivery, len(page.Data)), Pagination: orgPageInfo(page)}
	for i, r := range page.Data {
		out.Data[i] = deliveryOf(r)
	}
	return out
}

// deliveryOf maps a delivery and its event's payload (the body every attempt sends).
func deliveryOf(r deliveryRow) api.WebhookDelivery {
	d := r.d
	payload := api.WebhookPayload{ID: d.EventID, EventType: api.WebhookEventType(d.EventType), OrganizationID: d.OrganizationID,
		CreatedAt: d.CreatedAt, Data: api.WebhookPayloadData{}}
	if r.eventAt != nil {
		payload.CreatedAt = *r.eventAt
	}
	if len(r.data) > 0 {
		var data api.WebhookPayloadData
		if err := data.UnmarshalJSON(r.data); err == nil {
			payload.Data = data
		}
	}
	out := api.WebhookDelivery{
		ID: d.ID, EndpointID: d.EndpointID, OrganizationID: d.OrganizationID, EventType: api.WebhookEventType(d.EventType),
		EventID: d.EventID, Payload: payload, Status: api.WebhookDeliveryStatus(d.Status), AttemptCount: int(d.AttemptCount),
		MaxAttempts: int(d.MaxAttempts), NextAttemptAt: d.NextAttemptAt, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
	}
	out.LastAttemptAt.SetToNull()
	if d.LastAttemptAt != nil {
		out.LastAttemptAt.SetTo(*d.LastAttemptAt)
	}
	out.ResponseStatus.SetToNull()
	if d.ResponseStatus != nil {
		out.ResponseStatus.SetTo(int(*d.ResponseStatus))
	}
	out.ResponseBodyExcerpt.SetToNull()
	if d.ResponseBodyExcerpt != nil {
		out.ResponseBodyExcerpt.SetTo(*d.ResponseBodyExcerpt)
	}
	out.ErrorReason.SetToNull()
	if d.ErrorReason != nil {
		out.ErrorReason.SetTo(*d.ErrorReason)
	}
	return out
}
