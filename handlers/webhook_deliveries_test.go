package handlers_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/eventing/delivery"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/oauth"
	"github.com/outflowhq/outflow/webhook"
)

// wdEnv is an API over a fresh database whose webhooks may call loopback receivers.
func wdEnv(t *testing.T) *apitest.Env {
	return apitest.New(t, apitest.AllowPrivateWebhooks())
}

// wdKeyring opens and seals what the server seals.
func wdKeyring(t *testing.T, env *apitest.Env) *seal.Keyring {
	k, err := seal.NewKeyring(append([][]byte{env.Config.SecretKey}, env.Config.PreviousSecretKeys...)...)
	require.NoError(t, err)
	return k
}

// wdEndpoint inserts a verified endpoint as the endpoint operations would leave it and returns its id and
// secret.
func wdEndpoint(t *testing.T, env *apitest.Env, org uuid.UUID, url string, types ...string) (uuid.UUID, string) {
	t.Helper()
	id, secret := uuid.New(), oauth.NewWebhookSecret()
	if types == nil {
		types = []string{}
	}
	require.NoError(t, db.WithOrgTx(context.Background(), env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO webhook_endpoints (organization_id, id, url, event_types, secret_sealed, verified_at)
			VALUES ($1, $2, $3, $4, $5, now())`, org, id, url, types, delivery.SealSecret(wdKeyring(t, env), org, id, secret))
		return err
	}))
	return id, secret
}

// wdEmit records events of org in the outbox, as a write of any area would; the running workers dispatch them.
func wdEmit(t *testing.T, env *apitest.Env, org uuid.UUID, typ events.Type, data ...map[string]any) []uuid.UUID {
	t.Helper()
	jobs, err := river.NewClient(riverpgxv5.New(env.DB.Pool), &river.Config{})
	require.NoError(t, err)
	outbox := events.NewOutbox(jobs)
	ids := make([]uuid.UUID, len(data))
	require.NoError(t, db.WithOrgTx(context.Background(), env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		for i, d := range data {
			if ids[i], err = outbox.Emit(ctx, tx, typ, d); err != nil {
				return err
			}
		}
		return nil
	}))
	return ids
}

// wdHit is one request a receiver got.
type wdHit struct {
	eventID string
	data    map[string]any
	signed  bool
	secret  string // the secret whose signature matched
	start   time.Time
}

// wdReceiver is a subscriber that verifies every request's signature with its endpoint's secret.
type wdReceiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	secrets []string
	answer  func(h wdHit) int
	hits    []wdHit
	// arrived counts requests as they arrive (hits records them once answered).
	arrived atomic.Int32
}

func newWDReceiver(t *testing.T, answer func(h wdHit) int) *wdReceiver {
	r := &wdReceiver{answer: answer}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.arrived.Add(1)
		h := wdHit{start: time.Now()}
		body, _ := io.ReadAll(req.Body)
		var p struct {
			ID   string         `json:"id"`
			Data map[string]any `json:"data"`
		}
		_ = json.Unmarshal(body, &p)
		h.eventID, h.data = p.ID, p.Data
		r.mu.Lock()
		for _, secret := range r.secrets {
			if webhook.VerifySignature(secret, req.Header.Get(webhook.SignatureHeader), body, 0) == nil {
				h.secret = secret
			}
		}
		r.mu.Unlock()
		h.signed = h.secret != "" && req.Header.Get(webhook.EventIDHeader) == p.ID && req.Header.Get("User-Agent") == webhook.UserAgent &&
			req.Header.Get("Content-Type") == "application/json"
		status := http.StatusOK
		if r.answer != nil {
			status = r.answer(h)
		}
		r.mu.Lock()
		r.hits = append(r.hits, h)
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *wdReceiver) URL() string { return r.srv.URL + "/hook" }

func (r *wdReceiver) setSecret(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets = append(r.secrets, s)
}

func (r *wdReceiver) Hits() []wdHit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]wdHit(nil), r.hits...)
}

// perEvent counts the requests per event id, failing on any badly signed one.
func (r *wdReceiver) perEvent(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, h := range r.Hits() {
		require.True(t, h.signed, "request for event %s is signed with the endpoint's secret", h.eventID)
		out[h.eventID]++
	}
	return out
}

// wdNext is the cursor of the page after p.
func wdNext(p api.Pagination) api.OptString {
	next, ok := p.NextCursor.Get()
	if !ok {
		return api.OptString{}
	}
	return api.NewOptString(next)
}

// wdStatuses lists the deliveries' statuses by event id through the API.
func wdStatuses(t *testing.T, c *api.Client) map[uuid.UUID]api.WebhookDelivery {
	t.Helper()
	page, err := c.WebhooksListOrgDeliveries(context.Background(), api.WebhooksListOrgDeliveriesParams{Limit: api.NewOptInt(200)})
	require.NoError(t, err)
	out := map[uuid.UUID]api.WebhookDelivery{}
	for _, d := range page.Data {
		out[d.EventID] = d
	}
	return out
}

func TestWebhookDeliveryListsFiltersAndRedeliver(t *testing.T) {
	t.Parallel()
	env := wdEnv(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	client := env.Client(t, boot.APIKey)
	var failing sync.Map
	rcv := newWDReceiver(t, func(h wdHit) int {
		if _, bad := failing.Load(h.eventID); bad {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	all, secret := wdEndpoint(t, env, boot.OrganizationID, rcv.URL())
	rcv.setSecret(secret)
	firehose, _ := wdEndpoint(t, env, boot.OrganizationID, newWDReceiver(t, nil).URL(), "campaign.email_sent")

	created := wdEmit(t, env, boot.OrganizationID, events.ContactCreated, map[string]any{"n": 1}, map[string]any{"n": 2}, map[string]any{"n": 3})
	deleted := wdEmit(t, env, boot.OrganizationID, events.ContactDeleted, map[string]any{"contact_id": "c9"})
	failing.Store(deleted[0].String(), true)
	sent := wdEmit(t, env, boot.OrganizationID, events.CampaignEmailSent, map[string]any{"n": 5})
	env.StartWorkers(t)

	require.Eventually(t, func() bool {
		st := wdStatuses(t, client)
		return len(st) == 5 && st[deleted[0]].Status == api.WebhookDeliveryStatusFailed &&
			st[created[0]].Status == api.WebhookDeliveryStatusDelivered && st[created[1]].Status == api.WebhookDeliveryStatusDelivered &&
			st[created[2]].Status == api.WebhookDeliveryStatusDelivered && st[sent[0]].Status == api.WebhookDeliveryStatusDelivered
	}, 15*time.Second, 50*time.Millisecond)

	// Newest first, with the payload every attempt sends.
	page, err := client.WebhooksListOrgDeliveries(ctx, api.WebhooksListOrgDeliveriesParams{})
	require.NoError(t, err)
	require.Len(t, page.Data, 5)
	for i := 1; i < len(page.Data); i++ {
		require.False(t, page.Data[i].CreatedAt.After(page.Data[i-1].CreatedAt))
	}
	failed := wdStatuses(t, client)[deleted[0]]
	require.Equal(t, all, failed.EndpointID)
	require.Equal(t, boot.OrganizationID, failed.OrganizationID)
	require.Equal(t, api.WebhookEventTypeContactDeleted, failed.EventType)
	require.Equal(t, deleted[0], failed.Payload.ID)
	require.Equal(t, `"c9"`, string(failed.Payload.Data["contact_id"]))
	require.Equal(t, 1, failed.AttemptCount)
	require.Equal(t, 8, failed.MaxAttempts)
	require.Equal(t, 500, failed.ResponseStatus.Or(0))
	require.Equal(t, "HTTP 500", failed.ErrorReason.Or(""))
	require.WithinDuration(t, failed.LastAttemptAt.Or(time.Time{}).Add(30*time.Second), failed.NextAttemptAt, 2*time.Second)

	// Filters.
	page, err = client.WebhooksListOrgDeliveries(ctx, api.WebhooksListOrgDeliveriesParams{Status: api.NewOptWebhookDeliveryStatus(api.WebhookDeliveryStatusFailed)})
	require.NoError(t, err)
	require.Len(t, page.Data, 1)
	page, err = client.WebhooksListOrgDeliveries(ctx, api.WebhooksListOrgDeliveriesParams{EventType: api.NewOptWebhookEventType(api.WebhookEventTypeContactCreated)})
	require.NoError(t, err)
	require.Len(t, page.Data, 3)
	page, err = client.WebhooksListDeliveries(ctx, api.WebhooksListDeliveriesParams{ID: firehose})
	require.NoError(t, err)
	require.Len(t, page.Data, 1)
	require.Equal(t, sent[0], page.Data[0].EventID)
	page, err = client.WebhooksListDeliveries(ctx, api.WebhooksListDeliveriesParams{ID: all,
		Status: api.NewOptWebhookDeliveryStatus(api.WebhookDeliveryStatusDelivered), EventType: api.NewOptWebhookEventType(api.WebhookEventTypeContactCreated)})
	require.NoError(t, err)
	require.Len(t, page.Data, 3)

	// Pages of two, with opaque cursors.
	var seen []uuid.UUID
	params := api.WebhooksListDeliveriesParams{ID: all, Limit: api.NewOptInt(2)}
	for {
		page, err := client.WebhooksListDeliveries(ctx, params)
		require.NoError(t, err)
		require.LessOrEqual(t, len(page.Data), 2)
		for _, d := range page.Data {
			seen = append(seen, d.ID)
		}
		next, ok := page.Pagination.NextCursor.Get()
		if !ok {
			require.False(t, page.Pagination.HasMore)
			break
		}
		require.True(t, page.Pagination.HasMore)
		params.Cursor = api.NewOptString(next)
	}
	require.Len(t, seen, 4)

	// Limits outside 1..200, bad cursors, unknown filters, unknown and foreign endpoints.
	for _, path := range []string{"/v1/webhooks/deliveries", "/v1/webhooks/" + all.String() + "/deliveries"} {
		for _, q := range []string{"limit=0", "limit=201", "cursor=bogus", "status=lost", "event_type=nope.nope"} {
			require.Equal(t, http.StatusBadRequest, env.Do(t, http.MethodGet, path+"?"+q, boot.APIKey, nil, nil).StatusCode, path+"?"+q)
		}
		require.Equal(t, http.StatusOK, env.Do(t, http.MethodGet, path+"?limit=200", boot.APIKey, nil, nil).StatusCode)
	}
	_, err = client.WebhooksListDeliveries(ctx, api.WebhooksListDeliveriesParams{ID: uuid.New()})
	requireAPIError(t, err, 404, "not_found")
	other := env.Bootstrap(t, "globex")
	otherClient := env.Client(t, other.APIKey)
	_, err = otherClient.WebhooksListDeliveries(ctx, api.WebhooksListDeliveriesParams{ID: all})
	requireAPIError(t, err, 404, "not_found")
	otherPage, err := otherClient.WebhooksListOrgDeliveries(ctx, api.WebhooksListOrgDeliveriesParams{})
	require.NoError(t, err)
	require.Empty(t, otherPage.Data)
	_, err = env.Client(t, scopedKey(t, env, boot.OrganizationID, auth.ReadContacts)).WebhooksListOrgDeliveries(ctx, api.WebhooksListOrgDeliveriesParams{})
	requireAPIError(t, err, 403, "missing_scope")

	// Redeliver: a new lifecycle of the same event, whatever the status (failed here, delivered next).
	failing.Delete(deleted[0].String())
	again, err := client.WebhooksRedeliver(ctx, api.WebhooksRedeliverParams{DeliveryId: failed.ID})
	require.NoError(t, err)
	require.Equal(t, failed.ID, again.ID)
	require.Equal(t, deleted[0], again.EventID)
	require.Equal(t, api.WebhookDeliveryStatusPending, again.Status)
	require.Zero(t, again.AttemptCount)
	require.False(t, again.ResponseStatus.Set && !again.ResponseStatus.Null)
	delivered := wdStatuses(t, client)[created[0]]
	_, err = client.WebhooksRedeliver(ctx, api.WebhooksRedeliverParams{DeliveryId: delivered.ID})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st := wdStatuses(t, client)
		return st[deleted[0]].Status == api.WebhookDeliveryStatusDelivered && st[created[0]].Status == api.WebhookDeliveryStatusDelivered &&
			st[deleted[0]].AttemptCount == 1 && rcv.perEvent(t)[created[0].String()] == 2
	}, 15*time.Second, 50*time.Millisecond)
	counts := rcv.perEvent(t)
	require.Equal(t, 2, counts[deleted[0].String()], "the failed attempt and the redelivery, same event id")
	require.Equal(t, 2, counts[created[0].String()])
	require.Equal(t, 1, counts[created[1].String()])

	_, err = client.WebhooksRedeliver(ctx, api.WebhooksRedeliverParams{DeliveryId: uuid.New()})
	requireAPIError(t, err, 404, "not_found")
	_, err = otherClient.WebhooksRedeliver(ctx, api.WebhooksRedeliverParams{DeliveryId: failed.ID})
	requireAPIError(t, err, 404, "not_found")
}

// Throttle drops are listed per window with filters and a total.
func TestWebhookThrottleDropsList(t *testing.T) {
	t.Parallel()
	env := wdEnv(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	client := env.Client(t, boot.APIKey)
	endpointID, _ := wdEndpoint(t, env, boot.OrganizationID, "https://hooks.example.com/in")
	jobs, err := river.NewClient(riverpgxv5.New(env.DB.Pool), &river.Config{})
	require.NoError(t, err)
	now := time.Now().UTC().Truncate(time.Minute).Add(-3 * time.Minute)
	clock := func() time.Time { return now }
	consumer := delivery.NewConsumer(jobs, delivery.ConsumerOptions{Limits: delivery.Limits{EndpointPerMinute: 2, OrgEventTypePerMinute: 4}, Now: clock})
	consume := func(typ events.Type, count int) {
		require.NoError(t, db.WithOrgTx(ctx, env.DB.Pool, boot.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
			for range count {
				if err := consumer.Consume(ctx, tx, events.Event{ID: uuid.New(), OrganizationID: boot.OrganizationID, Type: string(typ),
					Data: json.RawMessage(`{}`), CreatedAt: now}); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	consume(events.ContactCreated, 6) // 2 delivered, 2 over the endpoint's limit, 2 over the type throttle
	now = now.Add(time.Minute)
	consume(events.ContactDeleted, 3) // 2 delivered, 1 over the endpoint's limit

	list, err := client.WebhooksListThrottleDrops(ctx, api.WebhooksListThrottleDropsParams{})
	require.NoError(t, err)
	require.Equal(t, 5, list.TotalDropped)
	require.Len(t, list.Data, 3)
	require.WithinDuration(t, list.To.Add(-24*time.Hour), list.From, time.Second)
	newest := list.Data[0]
	require.Equal(t, api.WebhookEventTypeContactDeleted, newest.EventType)
	require.Equal(t, api.WebhookThrottleDropReasonEndpointRateLimit, newest.Reason)
	require.Equal(t, endpointID, newest.EndpointID.Or(uuid.Nil))
	require.Equal(t, 1, newest.Dropped)
	require.True(t, newest.WindowStart.Equal(now))
	require.True(t, newest.WindowEnd.Equal(now.Add(time.Minute)))

	list, err = client.WebhooksListThrottleDrops(ctx, api.WebhooksListThrottleDropsParams{
		Reason: api.NewOptWebhookThrottleDropReason(api.WebhookThrottleDropReasonOrgEventTypeThrottle)})
	require.NoError(t, err)
	require.Len(t, list.Data, 1)
	require.True(t, list.Data[0].EndpointID.Null)
	require.Equal(t, 2, list.Data[0].Dropped)
	require.Equal(t, 2, list.TotalDropped)

	list, err = client.WebhooksListThrottleDrops(ctx, api.WebhooksListThrottleDropsParams{
		EventType: api.NewOptWebhookEventType(api.WebhookEventTypeContactCreated), Limit: api.NewOptInt(1)})
	require.NoError(t, err)
	require.Len(t, list.Data, 1)
	require.Equal(t, 4, list.TotalDropped)
	require.True(t, list.Pagination.HasMore)
	list, err = client.WebhooksListThrottleDrops(ctx, api.WebhooksListThrottleDropsParams{
		EventType: api.NewOptWebhookEventType(api.WebhookEventTypeContactCreated), Limit: api.NewOptInt(1), Cursor: wdNext(list.Pagination)})
	require.NoError(t, err)
	require.Len(t, list.Data, 1)
	require.False(t, list.Pagination.HasMore)

	// A range that ends before the drops sees none.
	list, err = client.WebhooksListThrottleDrops(ctx, api.WebhooksListThrottleDropsParams{To: api.NewOptDateTime(now.Add(-time.Hour))})
	require.NoError(t, err)
	require.Empty(t, list.Data)
	require.Zero(t, list.TotalDropped)

	for _, q := range []string{"limit=0", "limit=201", "reason=other", "from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", "from=yesterday", "cursor=x"} {
		require.Equal(t, http.StatusBadRequest, env.Do(t, http.MethodGet, "/v1/webhooks/throttle-drops?"+q, boot.APIKey, nil, nil).StatusCode, q)
	}
}

// An app's developer lists the deliveries to its managed endpoints in every organization that authorized it.
func TestOAuthAppWebhookDeliveriesAcrossOrganizations(t *testing.T) {
	t.Parallel()
	env := wdEnv(t)
	ctx := context.Background()
	dev := env.Bootstrap(t, "partner")
	customer := env.Bootstrap(t, "acme")
	stranger := env.Bootstrap(t, "globex")
	owner := env.DB.OwnerPool(t)
	keyring := wdKeyring(t, env)

	appID := uuid.New()
	hash, err := bcrypt.GenerateFromPassword([]byte("s"), bcrypt.MinCost)
	require.NoError(t, err)
	_, err = owner.Exec(ctx, `INSERT INTO oauth_clients (id, organization_id, client_id, client_type, token_endpoint_auth_method,
		secret_hash, name, redirect_uris, grant_types, scopes, allowed_webhook_domains, webhook_url, webhook_events, webhook_secret_sealed)
		VALUES ($1, $2, 'ofc_wd', 'confidential', 'client_secret_basic', $3, 'Partner CRM', '{https://crm.partner.example/cb}',
		'{authorization_code,refresh_token}', $4, '{.partner.example}', 'https://hooks.partner.example/in', '{}', $5)`,
		appID, dev.OrganizationID, hash, int64(auth.ReadContacts), oauth.SealWebhookSecret(keyring, appID, oauth.NewWebhookSecret()))
	require.NoError(t, err)
	_, err = owner.Exec(ctx, `INSERT INTO oauth_grants (organization_id, id, client_id, user_id, scopes) VALUES ($1, $2, $3, $4, $5)`,
		customer.OrganizationID, uuid.New(), appID, customer.UserID, int64(auth.ReadContacts))
	require.NoError(t, err)
	managed := uuid.New()
	_, err = owner.Exec(ctx, `INSERT INTO webhook_endpoints (organization_id, id, url, secret_sealed, verified_at, oauth_client_id)
		VALUES ($1, $2, 'https://hooks.partner.example/in', '\x', now(), $3)`, customer.OrganizationID, managed, appID)
	require.NoError(t, err)
	// The customer's own dashboard endpoint's deliveries are not the app's.
	wdEndpoint(t, env, customer.OrganizationID, "https://hooks.acme.example/in")

	// Dispatch through the real consumer (no workers: the deliveries stay pending).
	jobs, err := river.NewClient(riverpgxv5.New(env.DB.Pool), &river.Config{})
	require.NoError(t, err)
	dispatcher := events.NewDispatcher(env.DB.Pool, delivery.NewConsumer(jobs, delivery.ConsumerOptions{}))
	ids := wdEmit(t, env, customer.OrganizationID, events.ContactCreated, map[string]any{"contact_email": "a@acme.example"}, map[string]any{"n": 2})
	ids = append(ids, wdEmit(t, env, customer.OrganizationID, events.CRMDealCreated, map[string]any{})...) // READ_CRM not granted
	for _, id := range ids {
		require.NoError(t, dispatcher.Dispatch(ctx, events.DispatchArgs{OrganizationID: customer.OrganizationID, EventID: id}))
	}

	devClient := env.Client(t, dev.APIKey)
	page, err := devClient.OAuthApplicationsListWebhookDeliveries(ctx, api.OAuthApplicationsListWebhookDeliveriesParams{ID: appID})
	require.NoError(t, err)
	require.Len(t, page.Data, 2)
	for _, d := range page.Data {
		require.Equal(t, customer.OrganizationID, d.OrganizationID)
		require.Equal(t, managed, d.EndpointID)
		require.Equal(t, customer.OrganizationID, d.Payload.OrganizationID)
		require.Equal(t, api.WebhookDeliveryStatusPending, d.Status)
	}
	require.Equal(t, ids[1], page.Data[0].EventID, "newest first")
	require.Equal(t, `"a@acme.example"`, string(page.Data[1].Payload.Data["contact_email"]))

	page, err = devClient.OAuthApplicationsListWebhookDeliveries(ctx, api.OAuthApplicationsListWebhookDeliveriesParams{ID: appID, Limit: api.NewOptInt(1)})
	require.NoError(t, err)
	require.Len(t, page.Data, 1)
	page, err = devClient.OAuthApplicationsListWebhookDeliveries(ctx, api.OAuthApplicationsListWebhookDeliveriesParams{ID: appID, Limit: api.NewOptInt(1),
		Cursor: wdNext(page.Pagination)})
	require.NoError(t, err)
	require.Len(t, page.Data, 1)
	require.Equal(t, ids[0], page.Data[0].EventID)
	page, err = devClient.OAuthApplicationsListWebhookDeliveries(ctx, api.OAuthApplicationsListWebhookDeliveriesParams{ID: appID,
		Status: api.NewOptWebhookDeliveryStatus(api.WebhookDeliveryStatusDelivered)})
	require.NoError(t, err)
	require.Empty(t, page.Data)

	// Only the developer's organization knows the app.
	_, err = env.Client(t, customer.APIKey).OAuthApplicationsListWebhookDeliveries(ctx, api.OAuthApplicationsListWebhookDeliveriesParams{ID: appID})
	requireAPIError(t, err, 404, "not_found")
	_, err = env.Client(t, stranger.APIKey).OAuthApplicationsListWebhookDeliveries(ctx, api.OAuthApplicationsListWebhookDeliveriesParams{ID: appID})
	requireAPIError(t, err, 404, "not_found")
	_, err = env.Client(t, scopedKey(t, env, dev.OrganizationID, auth.Webhooks)).OAuthApplicationsListWebhookDeliveries(ctx,
		api.OAuthApplicationsListWebhookDeliveriesParams{ID: appID})
	requireAPIError(t, err, 403, "missing_scope")
	for _, q := range []string{"limit=0", "limit=201", "cursor=x", "status=nope"} {
		require.Equal(t, http.StatusBadRequest, env.Do(t, http.MethodGet, "/v1/oauth/applications/"+appID.String()+"/webhook-deliveries?"+q,
			dev.APIKey, nil, nil).StatusCode, q)
	}
}

// Through the endpoint operations: an endpoint created and verified over the API receives events signed with
// its secret; after a rotation new deliveries (and redeliveries) sign with the new one.
func TestWebhookDeliveriesToAnEndpointCreatedThroughTheAPI(t *testing.T) {
	t.Parallel()
	env := wdEnv(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	client := env.Client(t, boot.APIKey)
	// Events fail by their payload's n, marked before they are emitted: the workers run, so an event marked
	// only after its emit could be delivered first.
	var failing sync.Map
	rcv := newWDReceiver(t, func(h wdHit) int {
		if _, bad := failing.Load(h.data["n"]); bad {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	target, err := url.Parse(rcv.URL())
	require.NoError(t, err)
	created, err := client.WebhooksCreate(ctx, &api.WebhookEndpointRequest{URL: *target,
		EventTypes: []api.WebhookEventType{api.WebhookEventTypeContactCreated}}, api.WebhooksCreateParams{})
	require.NoError(t, err)
	oldSecret := created.Secret
	rcv.setSecret(oldSecret)
	env.StartWorkers(t)

	// Unverified: events get no delivery.
	early := wdEmit(t, env, boot.OrganizationID, events.ContactCreated, map[string]any{"n": 0})
	owner := env.DB.OwnerPool(t)
	require.Eventually(t, func() bool {
		var dispatched bool
		require.NoError(t, owner.QueryRow(ctx, "SELECT dispatched_at IS NOT NULL FROM event_outbox WHERE id = $1", early[0]).Scan(&dispatched))
		return dispatched
	}, 10*time.Second, 20*time.Millisecond)
	res, err := client.WebhooksVerify(ctx, api.WebhooksVerifyParams{ID: created.ID})
	require.NoError(t, err)
	require.True(t, res.Verified, res.ErrorReason.Or(""))

	failing.Store(float64(1), true) // JSON numbers decode as float64
	first := wdEmit(t, env, boot.OrganizationID, events.ContactCreated, map[string]any{"n": 1})
	require.Eventually(t, func() bool { return wdStatuses(t, client)[first[0]].Status == api.WebhookDeliveryStatusFailed },
		10*time.Second, 20*time.Millisecond)
	rotated, err := client.WebhooksRotateSecret(ctx, api.WebhooksRotateSecretParams{ID: created.ID})
	require.NoError(t, err)
	rcv.setSecret(rotated.Secret)
	second := wdEmit(t, env, boot.OrganizationID, events.ContactCreated, map[string]any{"n": 2})
	require.Eventually(t, func() bool { return wdStatuses(t, client)[second[0]].Status == api.WebhookDeliveryStatusDelivered },
		10*time.Second, 20*time.Millisecond)
	failing.Delete(float64(1))
	_, err = client.WebhooksRedeliver(ctx, api.WebhooksRedeliverParams{DeliveryId: wdStatuses(t, client)[first[0]].ID})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return wdStatuses(t, client)[first[0]].Status == api.WebhookDeliveryStatusDelivered },
		10*time.Second, 20*time.Millisecond)

	used := map[string][]string{}
	for _, h := range rcv.Hits() {
		require.True(t, h.signed)
		used[h.eventID] = append(used[h.eventID], h.secret)
	}
	require.Empty(t, used[early[0].String()])
	require.Equal(t, []string{oldSecret, rotated.Secret}, used[first[0].String()], "created before the rotation; redelivered after")
	require.Equal(t, []string{rotated.Secret}, used[second[0].String()])
	_, ok := wdStatuses(t, client)[early[0]]
	require.False(t, ok)
}
