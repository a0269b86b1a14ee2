package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-faster/jx"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

// eventsRig is one organization with a full-access client and two contacts, for the product event tests.
type eventsRig struct {
	env      *apitest.Env
	org      uuid.UUID
	key      string
	c        *api.Client
	ada, bob api.Contact
}

func newEventsRig(t *testing.T) eventsRig {
	t.Helper()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	c := env.Client(t, boot.APIKey)
	made := createContacts(t, c, api.ContactCreate{Email: "ada@example.com"}, api.ContactCreate{Email: "bob@example.com"})
	return eventsRig{env: env, org: boot.OrganizationID, key: boot.APIKey, c: c, ada: made[0], bob: made[1]}
}

// publish records an event under key with the rig's client.
func (r eventsRig) publish(t *testing.T, key string, ev api.PublishProductEvent) (*api.ProductEventAccepted, error) {
	t.Helper()
	return r.c.ProductEventsCreate(context.Background(), &ev, api.ProductEventsCreateParams{IdempotencyKey: key})
}

// raw posts body to POST /v1/events as the SDK would not send it (it validates first), with the headers given.
func (r eventsRig) raw(t *testing.T, body string, header http.Header) *http.Response {
	t.Helper()
	h := http.Header{"Content-Type": {"application/json"}}
	for k, v := range header {
		h[k] = v
	}
	return r.env.Do(t, "POST", "/v1/events", r.key, strings.NewReader(body), h)
}

func dataOf(t *testing.T, v map[string]any) api.OptPublishProductEventData {
	t.Helper()
	out := api.PublishProductEventData{}
	for k, x := range v {
		raw, err := json.Marshal(x)
		require.NoError(t, err)
		out[k] = jx.Raw(raw)
	}
	return api.NewOptPublishProductEventData(out)
}

func TestProductEventsCreateRefusesWhatAnEventMayNotHoldNamingTheRule(t *testing.T) {
	t.Parallel()
	r := newEventsRig(t)
	ada := api.NewOptString("ada@example.com")

	// The Idempotency-Key is required: absent or empty, the house envelope says so.
	resp := r.raw(t, `{"name":"signup.completed","email":"ada@example.com"}`, nil)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	requireEnvelope(t, resp, "idempotency_key_required")
	_, err := r.publish(t, "", api.PublishProductEvent{Name: "signup.completed", Email: ada})
	requireAPIError(t, err, 400, "idempotency_key_required")

	for _, tc := range []struct {
		what string
		ev   api.PublishProductEvent
		code string
	}{
		{"a name over 255 characters", api.PublishProductEvent{Name: strings.Repeat("a", 256), Email: ada}, "invalid_name"},
		{"no contact", api.PublishProductEvent{Name: "signup"}, "contact_required"},
		{"an id and an address of two contacts", api.PublishProductEvent{Name: "signup", ContactID: api.NewOptUUID(r.bob.ID), Email: ada}, "contact_mismatch"},
		{"occurred_at more than 5 minutes ahead", api.PublishProductEvent{Name: "signup", Email: ada,
			OccurredAt: api.NewOptDateTime(time.Now().Add(6 * time.Minute))}, "invalid_occurred_at"},
		{"data over 64 KiB", api.PublishProductEvent{Name: "signup", Email: ada,
			Data: dataOf(t, map[string]any{"blob": strings.Repeat("x", 64<<10)})}, "data_too_large"},
	} {
		_, err := r.publish(t, uuid.NewString(), tc.ev)
		requireAPIError(t, err, 400, tc.code)
	}

	for _, tc := range []struct{ what, body, code string }{
		{"a name not of lowercase dotted words", `{"name":"Signup Completed","email":"ada@example.com"}`, "invalid_request"},
		{"a name with an empty word", `{"name":"signup..completed","email":"ada@example.com"}`, "invalid_request"},
		{"data that is not an object", `{"name":"signup","email":"ada@example.com","data":[1,2]}`, "invalid_body"},
		{"an address that is no address", `{"name":"signup","email":"not an address"}`, "invalid_request"},
		{"data over 64 KiB as stored (jsonb writes numbers out)", `{"name":"signup","email":"ada@example.com","data":{"n":1e65600}}`, "data_too_large"},
		{"a NUL character in data", `{"name":"signup","email":"ada@example.com","data":{"note":"a\u0000b"}}`, "invalid_text"},
	} {
		resp := r.raw(t, tc.body, http.Header{"Idempotency-Key": {uuid.NewString()}})
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, tc.what)
		requireEnvelope(t, resp, tc.code)
	}
	require.Zero(t, orgInt(t, r.env, r.org, `SELECT count(*) FROM product_events`), "nothing refused was recorded")

	// At the edges: 255 characters, 4 minutes ahead, the id and the address of one contact.
	ok, err := r.publish(t, uuid.NewString(), api.PublishProductEvent{Name: strings.Repeat("a", 251) + ".b-_", ContactID: api.NewOptUUID(r.ada.ID),
		Email: api.NewOptString("ADA@example.com"), OccurredAt: api.NewOptDateTime(time.Now().Add(4 * time.Minute))})
	require.NoError(t, err)
	require.Equal(t, r.ada.ID, ok.ContactID)
}

func TestProductEventsCreateRecordsTheEventForAnExistingContactOnly(t *testing.T) {
	t.Parallel()
	r := newEventsRig(t)
	ctx := context.Background()
	occurred := time.Now().Add(-time.Hour).Truncate(time.Second)
	res, err := r.publish(t, "k1", api.PublishProductEvent{Name: "trial.started", Email: api.NewOptString("BOB@Example.com"),
		OccurredAt: api.NewOptDateTime(occurred), Data: dataOf(t, map[string]any{"plan": "pro", "seats": 3})})
	require.NoError(t, err)
	require.Equal(t, r.bob.ID, res.ContactID, "the address names the contact")
	require.Equal(t, "trial.started", res.Name.Value)
	require.Zero(t, res.MatchedWaits)
	require.Empty(t, res.MatchedRuns)
	require.WithinDuration(t, time.Now(), res.ReceivedAt.Value, time.Minute)

	got, err := r.c.ProductEventsGet(ctx, api.ProductEventsGetParams{ID: res.EventID})
	require.NoError(t, err)
	require.Equal(t, r.org, got.OrganizationID.Value)
	require.Equal(t, r.bob.ID, got.ContactID)
	require.True(t, occurred.Equal(got.OccurredAt))
	require.JSONEq(t, `"pro"`, string(got.Data.Value["plan"]))
	require.JSONEq(t, `3`, string(got.Data.Value["seats"]))
	require.Equal(t, int64(1), orgInt(t, r.env, r.org, `SELECT count(*) FROM audit_log WHERE event = 'product_event.recorded'
		AND target_id = $1`, res.EventID.String()), "the write is in the audit log")

	// occurred_at defaults to now; data to an empty object.
	res, err = r.publish(t, "k2", api.PublishProductEvent{Name: "login", ContactID: api.NewOptUUID(r.ada.ID)})
	require.NoError(t, err)
	got, err = r.c.ProductEventsGet(ctx, api.ProductEventsGetParams{ID: res.EventID})
	require.NoError(t, err)
	require.WithinDuration(t, got.ReceivedAt, got.OccurredAt, time.Second)
	require.Empty(t, got.Data.Value)

	// An unknown contact is 404 and no contact is created for it.
	contacts := orgInt(t, r.env, r.org, `SELECT count(*) FROM contacts`)
	_, err = r.publish(t, "k3", api.PublishProductEvent{Name: "login", Email: api.NewOptString("carol@example.com")})
	requireAPIError(t, err, 404, "contact_not_found")
	_, err = r.publish(t, "k4", api.PublishProductEvent{Name: "login", ContactID: api.NewOptUUID(uuid.New())})
	requireAPIError(t, err, 404, "contact_not_found")
	require.Equal(t, contacts, orgInt(t, r.env, r.org, `SELECT count(*) FROM contacts`))

	// Another organization's contact and event are unknown here.
	other := r.env.Bootstrap(t, "globex")
	oc := r.env.Client(t, other.APIKey)
	_, err = oc.ProductEventsCreate(ctx, &api.PublishProductEvent{Name: "login", ContactID: api.NewOptUUID(r.ada.ID)},
		api.ProductEventsCreateParams{IdempotencyKey: "k1"})
	requireAPIError(t, err, 404, "contact_not_found")
	_, err = oc.ProductEventsGet(ctx, api.ProductEventsGetParams{ID: res.EventID})
	requireAPIError(t, err, 404, "product_event_not_found")
	_, err = r.c.ProductEventsGet(ctx, api.ProductEventsGetParams{ID: uuid.New()})
	requireAPIError(t, err, 404, "product_event_not_found")
}

func TestProductEventsCreateRecordsAnEventOncePerIdempotencyKey(t *testing.T) {
	t.Parallel()
	r := newEventsRig(t)
	ev := api.PublishProductEvent{Name: "invoice.paid", Email: api.NewOptString("ada@example.com"), Data: dataOf(t, map[string]any{"amount": 42})}
	first, err := r.publish(t, "pay-1", ev)
	require.NoError(t, err)
	again, err := r.publish(t, "pay-1", ev)
	require.NoError(t, err)
	require.Equal(t, first.EventID, again.EventID, "the retry answers the same event")

	// Another credential of the organization with the same key: the row's key stands behind the HTTP replay.
	other := r.env.Client(t, scopedKey(t, r.env, r.org, auth.WriteEvents))
	third, err := other.ProductEventsCreate(context.Background(), &ev, api.ProductEventsCreateParams{IdempotencyKey: "pay-1"})
	require.NoError(t, err)
	require.Equal(t, first.EventID, third.EventID)
	require.Equal(t, int64(1), orgInt(t, r.env, r.org, `SELECT count(*) FROM product_events`))
	require.Equal(t, int64(1), orgInt(t, r.env, r.org, `SELECT count(*) FROM audit_log WHERE event = 'product_event.recorded'`))

	// The key for another event (data, contact) is refused, by this credential (the HTTP layer) and by one that
	// never sent it (the row).
	changed := ev
	changed.Data = dataOf(t, map[string]any{"amount": 43})
	_, err = r.publish(t, "pay-1", changed)
	requireAPIError(t, err, 422, "idempotency_key_reused")
	fresh := r.env.Client(t, scopedKey(t, r.env, r.org, auth.WriteEvents))
	_, err = fresh.ProductEventsCreate(context.Background(), &changed, api.ProductEventsCreateParams{IdempotencyKey: "pay-1"})
	requireAPIError(t, err, 422, "idempotency_key_reused")
	changed = ev
	changed.Email = api.NewOptString("bob@example.com")
	_, err = fresh.ProductEventsCreate(context.Background(), &changed, api.ProductEventsCreateParams{IdempotencyKey: "pay-1"})
	requireAPIError(t, err, 422, "idempotency_key_reused")
	require.Equal(t, int64(1), orgInt(t, r.env, r.org, `SELECT count(*) FROM product_events`))

	// Keys are the organization's own: another organization may use the same one.
	globex := r.env.Bootstrap(t, "globex")
	gc := r.env.Client(t, globex.APIKey)
	createContacts(t, gc, api.ContactCreate{Email: "ada@example.com"})
	theirs, err := gc.ProductEventsCreate(context.Background(), &ev, api.ProductEventsCreateParams{IdempotencyKey: "pay-1"})
	require.NoError(t, err)
	require.NotEqual(t, first.EventID, theirs.EventID)
}

func TestProductEventsListFiltersAndPagesNewestFirst(t *testing.T) {
	t.Parallel()
	r := newEventsRig(t)
	ctx := context.Background()
	var ids []uuid.UUID // in the order recorded
	for i, ev := range []api.PublishProductEvent{
		{Name: "login", ContactID: api.NewOptUUID(r.ada.ID)},
		{Name: "login", ContactID: api.NewOptUUID(r.bob.ID)},
		{Name: "invoice.paid", ContactID: api.NewOptUUID(r.ada.ID)},
		{Name: "login", ContactID: api.NewOptUUID(r.ada.ID)},
		{Name: "invoice.paid", ContactID: api.NewOptUUID(r.bob.ID)},
	} {
		res, err := r.publish(t, fmt.Sprintf("k%d", i), ev)
		require.NoError(t, err)
		ids = append(ids, res.EventID)
	}
	// Spread the receipt times a second apart, oldest first, so since has something to cut.
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	for i, id := range ids {
		orgExec(t, r.env, r.org, `UPDATE product_events SET received_at = $1 WHERE id = $2`, base.Add(time.Duration(i)*time.Second), id)
	}
	list := func(p api.ProductEventsListParams) []uuid.UUID {
		t.Helper()
		out, err := r.c.ProductEventsList(ctx, p)
		require.NoError(t, err)
		got := make([]uuid.UUID, len(out.Data))
		for i, e := range out.Data {
			got[i] = e.ID
		}
		return got
	}
	require.Equal(t, []uuid.UUID{ids[4], ids[3], ids[2], ids[1], ids[0]}, list(api.ProductEventsListParams{}), "newest received first")
	require.Equal(t, []uuid.UUID{ids[3], ids[1], ids[0]}, list(api.ProductEventsListParams{Name: api.NewOptString("login")}))
	require.Equal(t, []uuid.UUID{ids[4], ids[1]}, list(api.ProductEventsListParams{Email: api.NewOptString("BOB@example.com")}))
	require.Equal(t, []uuid.UUID{ids[3], ids[2], ids[0]}, list(api.ProductEventsListParams{ContactID: api.NewOptUUID(r.ada.ID)}))
	require.Equal(t, []uuid.UUID{ids[4], ids[3], ids[2]}, list(api.ProductEventsListParams{Since: api.NewOptDateTime(base.Add(2 * time.Second))}))
	require.Equal(t, []uuid.UUID{ids[3], ids[0]}, list(api.ProductEventsListParams{Name: api.NewOptString("login"),
		Email: api.NewOptString("ada@example.com"), Since: api.NewOptDateTime(base)}))
	require.Empty(t, list(api.ProductEventsListParams{Email: api.NewOptString("carol@example.com")}))

	// Pages of two follow the cursor to the end.
	var seen []uuid.UUID
	p := api.ProductEventsListParams{Limit: api.NewOptInt(2)}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 3)
		out, err := r.c.ProductEventsList(ctx, p)
		require.NoError(t, err)
		require.LessOrEqual(t, len(out.Data), 2)
		for _, e := range out.Data {
			seen = append(seen, e.ID)
		}
		if !out.Pagination.Value.HasMore.Value {
			require.False(t, out.Pagination.Value.NextCursor.Set)
			break
		}
		p.Cursor = out.Pagination.Value.NextCursor
	}
	require.Equal(t, []uuid.UUID{ids[4], ids[3], ids[2], ids[1], ids[0]}, seen)

	for _, q := range []string{"limit=0", "limit=201", "limit=two", "cursor=forged", "email=nobody", "since=yesterday", "contact_id=42"} {
		resp := r.env.Do(t, "GET", "/v1/events?"+q, r.key, nil, nil)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, q)
	}
	resp := r.env.Do(t, "GET", "/v1/events?limit=200", r.key, nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestProductEventsNeedTheirScopes(t *testing.T) {
	t.Parallel()
	r := newEventsRig(t)
	ctx := context.Background()
	reader := r.env.Client(t, scopedKey(t, r.env, r.org, auth.ReadCampaigns))
	_, err := reader.ProductEventsCreate(ctx, &api.PublishProductEvent{Name: "login", ContactID: api.NewOptUUID(r.ada.ID)},
		api.ProductEventsCreateParams{IdempotencyKey: "k"})
	requireAPIError(t, err, 403, "missing_scope")
	_, err = reader.ProductEventsList(ctx, api.ProductEventsListParams{})
	require.NoError(t, err)

	writer := r.env.Client(t, scopedKey(t, r.env, r.org, auth.WriteEvents))
	res, err := writer.ProductEventsCreate(ctx, &api.PublishProductEvent{Name: "login", ContactID: api.NewOptUUID(r.ada.ID)},
		api.ProductEventsCreateParams{IdempotencyKey: "k"})
	require.NoError(t, err)
	_, err = writer.ProductEventsGet(ctx, api.ProductEventsGetParams{ID: res.EventID})
	requireAPIError(t, err, 403, "missing_scope")
}
