package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/delivery"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/egress"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/internal/trail/audit"
	"github.com/outflowhq/outflow/oauth"
)

// Webhooks implements the endpoint operations of the Webhooks group: the organization's endpoints, their
// secrets and the verification challenge, and the event catalog. Every URL goes through package egress, at
// registration and again before the challenge is sent. The deliveries themselves are package delivery's.
type Webhooks struct {
	pool      *pgxpool.Pool
	queries   *dbq.Queries
	keyring   *seal.Keyring
	egress    egress.Options
	deliverer *delivery.Deliverer
	jobs      delivery.Inserter
}

// NewWebhooks builds the endpoint operations; opts are the deployment's egress rules (AllowPrivate from
// OUTFLOW_WEBHOOKS_ALLOW_PRIVATE), used to validate URLs; deliverer sends challenges, and jobs (a River client,
// insert-only is enough) schedules the challenge of an OAuth app's new managed endpoint.
func NewWebhooks(pool *pgxpool.Pool, keyring *seal.Keyring, opts egress.Options, deliverer *delivery.Deliverer, jobs delivery.Inserter) *Webhooks {
	return &Webhooks{pool: pool, queries: dbq.New(), keyring: keyring, egress: opts, deliverer: deliverer, jobs: jobs}
}

// Limits of an endpoint's fields and of a challenge's answer.
const (
	maxWebhookDescription = 500
)

// caller is the organization of a WEBHOOKS (keys, OAuth) or manage_settings (sessions) caller; the route table
// has already checked both, this names the organization.
func (h *Webhooks) caller(ctx context.Context) (uuid.UUID, error) {
	return teamCaller(ctx, auth.Webhooks, "WEBHOOKS", auth.ManageSettings)
}

// --- mapping

func nilDateTimeOf(t *time.Time) api.NilDateTime {
	if t == nil {
		return api.NilDateTime{Null: true}
	}
	return api.NewNilDateTime(*t)
}

// webhookEndpointOf maps an endpoint row, never with a secret.
func webhookEndpointOf(r dbq.WebhookEndpoint) api.WebhookEndpoint {
	var u url.URL
	if parsed, err := url.Parse(r.Url); err == nil {
		u = *parsed
	}
	out := api.WebhookEndpoint{
		ID: r.ID, OrganizationID: r.OrganizationID, URL: u, Description: r.Description,
		EventTypes: make([]api.WebhookEventType, len(r.EventTypes)), Enabled: r.Enabled,
		VerifiedAt: nilDateTimeOf(r.VerifiedAt), OwnershipConfirmed: r.OwnershipConfirmed,
		LastSuccessAt: optNilTime(r.LastSuccessAt), LastFailureAt: optNilTime(r.LastFailureAt),
		LastFailureReason: optNilStringPtr(r.LastFailureReason), ConsecutiveFailures: int(r.ConsecutiveFailures),
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
	for i, t := range r.EventTypes {
		out.EventTypes[i] = api.WebhookEventType(t)
	}
	return out
}

// webhookEndpointAudit is what an endpoint's audit entries keep: where it points and what it receives.
func webhookEndpointAudit(r dbq.WebhookEndpoint) map[string]any {
	return map[string]any{"url": r.Url, "event_types": r.EventTypes, "enabled": r.Enabled, "description": r.Description}
}

// --- validation

// endpointFields are the settings of POST /webhooks and PATCH /webhooks/{id}, checked.
type endpointFields struct {
	url         *url.URL
	description string
	eventTypes  []string
	enabled     bool
}

// checkEndpoint validates a request: the URL by the egress rules (a DNS lookup, outside any transaction), the
// description's length, the event types against the catalog (webhook.test is the challenge only).
func (h *Webhooks) checkEndpoint(ctx context.Context, req *api.WebhookEndpointRequest) (endpointFields, error) {
	f := endpointFields{description: req.Description.Value, enabled: req.Enabled.Or(true)}
	if utf8.RuneCountInString(f.description) > maxWebhookDescription {
		return f, apierror.BadRequest("invalid_description", fmt.Sprintf("description must be at most %d characters.", maxWebhookDescription))
	}
	types, err := endpointEventTypes(req.EventTypes)
	if err != nil {
		return f, err
	}
	f.eventTypes = types
	u, err := h.validateURL(ctx, req.URL.String())
	if err != nil {
		return f, err
	}
	f.url = u
	return f, nil
}

// validateURL applies the egress rules to a URL a tenant sent: a refusal is a 400 whose code names the rule.
func (h *Webhooks) validateURL(ctx context.Context, raw string) (*url.URL, error) {
	u, err := egress.ValidateURL(ctx, raw, h.egress)
	var refused *egress.Error
	if errors.As(err, &refused) {
		return nil, apierror.BadRequest("webhook_url_"+string(refused.Reason), "url is not allowed: "+refused.Message+".").
			WithFix("Use an https URL on port 443 whose host name resolves to public addresses only.")
	}
	return u, err
}

// endpointEventTypes checks and de-duplicates a subscription list; empty means every non-firehose event.
func endpointEventTypes(in []api.WebhookEventType) ([]string, error) {
	out := make([]string, 0, len(in))
	var unknown []string
	for _, t := range in {
		info, ok := events.Lookup(events.Type(t))
		switch {
		case !ok:
			if !slices.Contains(unknown, string(t)) {
				unknown = append(unknown, string(t))
			}
			continue
		case info.Type == events.WebhookTest:
			return nil, apierror.BadRequest("event_type_not_subscribable",
				"webhook.test is the verification challenge only; POST /webhooks/{id}/verify sends it.")
		}
		if !slices.Contains(out, string(t)) {
			out = append(out, string(t))
		}
	}
	if len(unknown) > 0 {
		return nil, apierror.BadRequest("unknown_event_types",
			"Unknown event types: "+strings.Join(unknown, ", ")+". GET /webhooks/event-types lists them.")
	}
	return out, nil
}

// errManagedEndpoint refuses changes to an OAuth app's managed endpoint: its URL and secret are the app's.
var errManagedEndpoint = apierror.Conflict("webhook_endpoint_managed",
	"This endpoint is managed by an OAuth application: its URL and secret are the app's. Revoke the app's access to remove it.")

// --- operations

// WebhooksList answers every endpoint of the organization (OAuth apps' managed ones included), newest first,
// without secrets.
func (h *Webhooks) WebhooksList(ctx context.Context) (*api.WebhookEndpointList, error) {
	org, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	var rows []dbq.WebhookEndpoint
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err = h.queries.WebhookEndpointList(ctx, tx, org)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.WebhookEndpointList{Endpoints: make([]api.WebhookEndpoint, len(rows))}
	for i, r := range rows {
		out.Endpoints[i] = webhookEndpointOf(r)
	}
	return out, nil
}

// WebhooksCreate registers an endpoint, unverified, and answers its signing secret this once.
func (h *Webhooks) WebhooksCreate(ctx context.Context, req *api.WebhookEndpointRequest, _ api.WebhooksCreateParams) (*api.WebhookEndpointWithSecret, error) {
	org, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	f, err := h.checkEndpoint(ctx, req)
	if err != nil {
		return nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	secret := oauth.NewWebhookSecret()
	var row dbq.WebhookEndpoint
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		row, err = h.queries.WebhookEndpointCreate(ctx, tx, dbq.WebhookEndpointCreateParams{
			OrganizationID: org, ID: id, Url: f.url.String(), Description: f.description, EventTypes: f.eventTypes,
			Enabled: f.enabled, SecretSealed: delivery.SealSecret(h.keyring, org, id, secret),
		})
		if err != nil {
			return db.Classify(err, "Webhook endpoint")
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "webhook_endpoint.created", EntityType: audit.EntityWebhook,
			EntityID: id.String(), Metadata: webhookEndpointAudit(row)})
	})
	if err != nil {
		return nil, err
	}
	e := webhookEndpointOf(row)
	return &api.WebhookEndpointWithSecret{
		ID: e.ID, OrganizationID: e.OrganizationID, URL: e.URL, Description: e.Description, EventTypes: e.EventTypes,
		Enabled: e.Enabled, VerifiedAt: e.VerifiedAt, OwnershipConfirmed: e.OwnershipConfirmed,
		LastSuccessAt: e.LastSuccessAt, LastFailureAt: e.LastFailureAt, LastFailureReason: e.LastFailureReason,
		ConsecutiveFailures: e.ConsecutiveFailures, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt, Secret: secret,
	}, nil
}

// WebhooksUpdate replaces an endpoint's settings with what is sent (omitted event_types: every non-firehose
// event; omitted enabled: true). A new URL host makes the endpoint unverified again.
func (h *Webhooks) WebhooksUpdate(ctx context.Context, req *api.WebhookEndpointRequest, params api.WebhooksUpdateParams) (*api.WebhookEndpoint, error) {
	org, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	// An unknown or managed endpoint is refused before the URL is resolved (outside any transaction).
	if _, err := h.editable(ctx, org, params.ID); err != nil {
		return nil, err
	}
	f, err := h.checkEndpoint(ctx, req)
	if err != nil {
		return nil, err
	}
	var row dbq.WebhookEndpoint
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		cur, err := h.queries.WebhookEndpointGetForUpdate(ctx, tx, dbq.WebhookEndpointGetForUpdateParams{OrganizationID: org, ID: params.ID})
		if err != nil {
			return db.Classify(err, "Webhook endpoint")
		}
		if cur.OauthClientID.Valid {
			return errManagedEndpoint
		}
		rearm := urlHost(cur.Url) != f.url.Hostname()
		row, err = h.queries.WebhookEndpointUpdate(ctx, tx, dbq.WebhookEndpointUpdateParams{
			OrganizationID: org, ID: params.ID, Url: f.url.String(), Description: f.description,
			EventTypes: f.eventTypes, Enabled: f.enabled, Rearm: rearm,
		})
		if err != nil {
			return db.Classify(err, "Webhook endpoint")
		}
		meta := webhookEndpointAudit(row)
		meta["previous_url"] = cur.Url
		meta["verification_rearmed"] = rearm && cur.VerifiedAt != nil
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "webhook_endpoint.updated", EntityType: audit.EntityWebhook,
			EntityID: row.ID.String(), Metadata: meta})
	})
	if err != nil {
		return nil, err
	}
	out := webhookEndpointOf(row)
	return &out, nil
}

// editable reads an endpoint of org that the organization may change: a 404 for an unknown id, a 409 for an
// OAuth app's managed endpoint.
func (h *Webhooks) editable(ctx context.Context, org, id uuid.UUID) (dbq.WebhookEndpoint, error) {
	var ep dbq.WebhookEndpoint
	err := db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		ep, err = h.queries.WebhookEndpointGet(ctx, tx, dbq.WebhookEndpointGetParams{OrganizationID: org, ID: id})
		if err != nil {
			return db.Classify(err, "Webhook endpoint")
		}
		if ep.OauthClientID.Valid {
			return errManagedEndpoint
		}
		return nil
	})
	return ep, err
}

// urlHost is the lower-cased host name of a stored URL.
func urlHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

// WebhooksDelete removes an endpoint and, through the foreign key, its deliveries.
func (h *Webhooks) WebhooksDelete(ctx context.Context, params api.WebhooksDeleteParams) error {
	org, err := h.caller(ctx)
	if err != nil {
		return err
	}
	return db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		cur, err := h.queries.WebhookEndpointGetForUpdate(ctx, tx, dbq.WebhookEndpointGetForUpdateParams{OrganizationID: org, ID: params.ID})
		if err != nil {
			return db.Classify(err, "Webhook endpoint")
		}
		if cur.OauthClientID.Valid {
			return errManagedEndpoint
		}
		if _, err := h.queries.WebhookEndpointDelete(ctx, tx, dbq.WebhookEndpointDeleteParams{OrganizationID: org, ID: params.ID}); err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionDelete, Event: "webhook_endpoint.deleted", EntityType: audit.EntityWebhook,
			EntityID: cur.ID.String(), Metadata: webhookEndpointAudit(cur)})
	})
}

// WebhooksRotateSecret issues a new signing secret and answers it this once. The old one stays as the previous
// secret and the generation moves on, so deliveries created before keep signing with it until they settle.
func (h *Webhooks) WebhooksRotateSecret(ctx context.Context, params api.WebhooksRotateSecretParams) (*api.WebhookSecretResponse, error) {
	org, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	secret := oauth.NewWebhookSecret()
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		cur, err := h.queries.WebhookEndpointGetForUpdate(ctx, tx, dbq.WebhookEndpointGetForUpdateParams{OrganizationID: org, ID: params.ID})
		if err != nil {
			return db.Classify(err, "Webhook endpoint")
		}
		if cur.OauthClientID.Valid {
			return errManagedEndpoint
		}
		generation, err := h.queries.WebhookEndpointRotateSecret(ctx, tx, dbq.WebhookEndpointRotateSecretParams{
			OrganizationID: org, ID: params.ID, SecretSealed: delivery.SealSecret(h.keyring, org, params.ID, secret)})
		if err != nil {
			return db.Classify(err, "Webhook endpoint")
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionRotateSecret, Event: "webhook_endpoint.secret_rotated", EntityType: audit.EntityWebhook,
			EntityID: params.ID.String(), Metadata: map[string]any{"generation": generation}})
	})
	if err != nil {
		return nil, err
	}
	return &api.WebhookSecretResponse{Secret: secret}, nil
}

// WebhooksListEventTypes answers the canonical catalog, in its published order.
func (h *Webhooks) WebhooksListEventTypes(ctx context.Context) (*api.WebhookEventTypeCatalog, error) {
	if _, err := h.caller(ctx); err != nil {
		return nil, err
	}
	out := &api.WebhookEventTypeCatalog{EventTypes: make([]api.WebhookEventTypeInfo, len(events.Catalog))}
	for i, e := range events.Catalog {
		out.EventTypes[i] = api.WebhookEventTypeInfo{Type: api.WebhookEventType(e.Type),
			Category: api.WebhookEventCategory(e.Category), Description: e.Description, Firehose: e.Firehose}
	}
	return out, nil
}

// --- the verification challenge

// WebhooksVerify sends the signed challenge now and reports the outcome (a failed challenge is a 200 whose
// verified is false and error_reason says why).
func (h *Webhooks) WebhooksVerify(ctx context.Context, params api.WebhooksVerifyParams) (*api.WebhookVerificationResult, error) {
	org, err := h.caller(ctx)
	if err != nil {
		return nil, err
	}
	res, err := h.deliverer.Challenge(ctx, org, params.ID, "")
	if errors.Is(err, delivery.ErrEndpointGone) {
		return nil, apierror.NotFound("not_found", "Webhook endpoint not found.")
	}
	if err != nil {
		return nil, err
	}
	out := &api.WebhookVerificationResult{EndpointID: res.EndpointID, Challenge: res.Challenge, AttemptedAt: res.AttemptedAt,
		Verified: res.Verified, VerifiedAt: nilDateTimeOf(res.VerifiedAt), ChallengeEchoed: res.Echoed,
		ResponseStatus: api.NilInt{Null: true}, ErrorReason: api.NilString{Null: true}}
	if res.Status != 0 {
		out.ResponseStatus = api.NewNilInt(res.Status)
		out.ResponseBodyExcerpt = api.NewOptNilString(res.Excerpt)
	}
	if res.Reason != "" {
		out.ErrorReason = api.NewNilString(res.Reason)
	}
	return out, nil
}

// ChallengeManaged schedules the challenge of the managed endpoint an approval just created for app clientID
// in org, to go out only while the endpoint still points at url (the app's webhook_url when it was
// authorized). It runs as a job, after the approval committed, so an app that echoes it starts receiving
// events without anyone asking; a failure leaves the endpoint unverified, and POST /webhooks/{id}/verify
// sends it again.
func (h *Webhooks) ChallengeManaged(ctx context.Context, org, clientID uuid.UUID, url string) error {
	return db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		ep, err := h.queries.WebhookEndpointGetManaged(ctx, tx, dbq.WebhookEndpointGetManagedParams{OrganizationID: org, OauthClientID: clientID})
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // revoked meanwhile
		}
		if err != nil {
			return err
		}
		_, err = h.jobs.InsertTx(ctx, tx, delivery.ChallengeArgs{OrganizationID: org, EndpointID: ep.ID, URL: url}, nil)
		return err
	})
}
