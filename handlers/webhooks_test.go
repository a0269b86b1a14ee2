package handlers_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/eventing/delivery"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/webhook"
)

// hookReceiver is a subscriber's endpoint: it records every request and answers as the test says.
type hookReceiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []hookRequest
	answer func(w http.ResponseWriter, challenge string)
}

type hookRequest struct {
	path   string
	header http.Header
	body   []byte
}

// hookChallenge is the part of a challenge's body the receiver reads.
type hookChallenge struct {
	ID             string `json:"id"`
	EventType      string `json:"event_type"`
	OrganizationID string `json:"organization_id"`
	CreatedAt      string `json:"created_at"`
	Data           struct {
		Challenge  string `json:"challenge"`
		EndpointID string `json:"endpoint_id"`
		Message    string `json:"message"`
	} `json:"data"`
}

func newHookReceiver(t *testing.T) *hookReceiver {
	t.Helper()
	r := &hookReceiver{answer: func(w http.ResponseWriter, _ string) { w.WriteHeader(http.StatusNoContent) }}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var c hookChallenge
		_ = json.Unmarshal(body, &c)
		r.mu.Lock()
		r.got = append(r.got, hookRequest{path: req.URL.Path, header: req.Header.Clone(), body: body})
		answer := r.answer
		r.mu.Unlock()
		answer(w, c.Data.Challenge)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *hookReceiver) respond(answer func(w http.ResponseWriter, challenge string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answer = answer
}

// last is the latest request, checked the way a receiver checks a delivery: the signature over the raw body
// with secret, the headers, and the body's event.
func (r *hookReceiver) last(t *testing.T, secret string) hookChallenge {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	require.NotEmpty(t, r.got)
	req := r.got[len(r.got)-1]
	require.NoError(t, webhook.VerifySignature(secret, req.header.Get(webhook.SignatureHeader), req.body, 0))
	require.Equal(t, "webhook.test", req.header.Get(webhook.EventHeader))
	require.Equal(t, webhook.UserAgent, req.header.Get("User-Agent"))
	require.Equal(t, "application/json", req.header.Get("Content-Type"))
	var c hookChallenge
	require.NoError(t, json.Unmarshal(req.body, &c))
	require.Equal(t, c.ID, req.header.Get(webhook.EventIDHeader))
	require.Equal(t, "webhook.test", c.EventType)
	require.NotEmpty(t, c.Data.Message)
	return c
}

func (r *hookReceiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

func hookURL(t *testing.T, raw string) url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return *u
}

func webhookAuditActions(t *testing.T, env *apitest.Env, org uuid.UUID) []string {
	t.Helper()
	var out []string
	for _, a := range orgAuditActions(t, env, org) {
		if strings.HasPrefix(a, "webhook_endpoint.") {
			out = append(out, a)
		}
	}
	return out
}

// endpointSecrets opens an endpoint's stored secrets the way the delivery engine does.
func endpointSecrets(t *testing.T, env *apitest.Env, org, id uuid.UUID) (current, previous string, generation int32) {
	t.Helper()
	keyring, err := seal.NewKeyring(env.Config.SecretKey)
	require.NoError(t, err)
	var sealed, prev []byte
	require.NoError(t, db.WithOrgTx(context.Background(), env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT secret_sealed, previous_secret_sealed, secret_generation FROM webhook_endpoints
			WHERE organization_id = $1 AND id = $2`, org, id).Scan(&sealed, &prev, &generation)
	}))
	current, err = delivery.OpenSecret(keyring, org, id, sealed)
	require.NoError(t, err)
	if prev != nil {
		previous, err = delivery.OpenSecret(keyring, org, id, prev)
		require.NoError(t, err)
	}
	return current, previous, generation
}

func TestWebhookEndpointLifecycle(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, apitest.AllowPrivateWebhooks())
	ctx := context.Background()
	pair := env.SignUp(t, "owner@hooks.example")
	org := homeOrganization(t, env, pair)
	owner := env.Client(t, pair.AccessToken)
	recv := newHookReceiver(t)

	// Create: 201 with the secret, once; unverified; enabled by default.
	created, err := owner.WebhooksCreate(ctx, &api.WebhookEndpointRequest{
		URL: hookURL(t, recv.srv.URL+"/hook"), Description: api.NewOptString("CRM sync"),
		EventTypes: []api.WebhookEventType{"contact.created", "campaign.email_opened", "contact.created"},
	}, api.WebhooksCreateParams{})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(created.Secret, "whsec_"), created.Secret)
	require.Len(t, created.Secret, len("whsec_")+43, "32 random bytes, base64url")
	require.True(t, created.Enabled)
	require.True(t, created.VerifiedAt.Null)
	require.False(t, created.OwnershipConfirmed)
	require.Equal(t, org, created.OrganizationID)
	require.Equal(t, []api.WebhookEventType{"contact.created", "campaign.email_opened"}, created.EventTypes)
	secret := created.Secret
	stored, _, generation := endpointSecrets(t, env, org, created.ID)
	require.Equal(t, secret, stored, "sealed at rest, opened by the delivery engine's key")
	require.EqualValues(t, 1, generation)

	// The secret is never listed, in any form.
	list, err := owner.WebhooksList(ctx)
	require.NoError(t, err)
	require.Len(t, list.Endpoints, 1)
	require.Equal(t, created.ID, list.Endpoints[0].ID)
	resp := env.Do(t, http.MethodGet, "/v1/webhooks", pair.AccessToken, nil, nil)
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NotContains(t, string(raw), secret)
	require.NotContains(t, string(raw), `"secret"`)

	// Verify: a signed challenge; any 2xx verifies a dashboard endpoint.
	res, err := owner.WebhooksVerify(ctx, api.WebhooksVerifyParams{ID: created.ID})
	require.NoError(t, err)
	require.True(t, res.Verified, res.ErrorReason.Value)
	require.False(t, res.VerifiedAt.Null)
	require.True(t, strings.HasPrefix(res.Challenge, "whcg_"), res.Challenge)
	require.False(t, res.ChallengeEchoed)
	require.Equal(t, http.StatusNoContent, res.ResponseStatus.Value)
	require.True(t, res.ErrorReason.Null)
	c := recv.last(t, secret)
	require.Equal(t, res.Challenge, c.Data.Challenge)
	require.Equal(t, created.ID.String(), c.Data.EndpointID)
	require.Equal(t, org.String(), c.OrganizationID)
	firstVerified := res.VerifiedAt.Value

	// Echoing the challenge also confirms ownership; verified_at keeps the first success.
	recv.respond(func(w http.ResponseWriter, challenge string) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"challenge": challenge})
	})
	res, err = owner.WebhooksVerify(ctx, api.WebhooksVerifyParams{ID: created.ID})
	require.NoError(t, err)
	require.True(t, res.Verified)
	require.True(t, res.ChallengeEchoed)
	require.Contains(t, res.ResponseBodyExcerpt.Value, res.Challenge)
	require.Equal(t, firstVerified, res.VerifiedAt.Value)

	// A failing answer is reported in the 200 answer; the endpoint stays verified. A long answer is cut at
	// 1024 bytes; a redirect is reported, not followed.
	recv.respond(func(w http.ResponseWriter, _ string) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(strings.Repeat("x", 5000)))
	})
	res, err = owner.WebhooksVerify(ctx, api.WebhooksVerifyParams{ID: created.ID})
	require.NoError(t, err)
	require.False(t, res.Verified)
	require.Equal(t, http.StatusInternalServerError, res.ResponseStatus.Value)
	require.Len(t, res.ResponseBodyExcerpt.Value, 1024)
	require.Contains(t, res.ErrorReason.Value, "500")
	recv.respond(func(w http.ResponseWriter, _ string) {
		w.Header().Set("Location", recv.srv.URL+"/elsewhere")
		w.WriteHeader(http.StatusFound)
	})
	before := recv.count()
	res, err = owner.WebhooksVerify(ctx, api.WebhooksVerifyParams{ID: created.ID})
	require.NoError(t, err)
	require.False(t, res.Verified)
	require.Equal(t, http.StatusFound, res.ResponseStatus.Value)
	require.Contains(t, res.ErrorReason.Value, "redirects are not followed")
	require.Equal(t, before+1, recv.count(), "the redirect was not followed")
	recv.respond(func(w http.ResponseWriter, _ string) { w.WriteHeader(http.StatusOK) })
	got, err := owner.WebhooksList(ctx)
	require.NoError(t, err)
	require.False(t, got.Endpoints[0].VerifiedAt.Null, "a failed test event does not unverify")
	require.True(t, got.Endpoints[0].OwnershipConfirmed)

	// Rotate: the new secret once; the old one is kept as the previous secret for deliveries under way.
	rotated, err := owner.WebhooksRotateSecret(ctx, api.WebhooksRotateSecretParams{ID: created.ID})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(rotated.Secret, "whsec_"))
	require.NotEqual(t, secret, rotated.Secret)
	current, previous, generation := endpointSecrets(t, env, org, created.ID)
	require.Equal(t, rotated.Secret, current)
	require.Equal(t, secret, previous)
	require.EqualValues(t, 2, generation)
	_, err = owner.WebhooksVerify(ctx, api.WebhooksVerifyParams{ID: created.ID})
	require.NoError(t, err)
	recv.last(t, rotated.Secret)

	// Update replaces everything: same host keeps the verification; omitted event_types and enabled mean
	// every non-firehose event and true.
	updated, err := owner.WebhooksUpdate(ctx, &api.WebhookEndpointRequest{URL: hookURL(t, recv.srv.URL+"/v2"),
		Enabled: api.NewOptBool(false)}, api.WebhooksUpdateParams{ID: created.ID})
	require.NoError(t, err)
	require.Equal(t, recv.srv.URL+"/v2", updated.URL.String())
	require.Empty(t, updated.EventTypes)
	require.Empty(t, updated.Description)
	require.False(t, updated.Enabled)
	require.False(t, updated.VerifiedAt.Null, "same host: still verified")
	updated, err = owner.WebhooksUpdate(ctx, &api.WebhookEndpointRequest{URL: hookURL(t, recv.srv.URL+"/v2"),
		EventTypes: []api.WebhookEventType{"inbox.email_received"}}, api.WebhooksUpdateParams{ID: created.ID})
	require.NoError(t, err)
	require.True(t, updated.Enabled, "enabled defaults to true")
	require.Equal(t, []api.WebhookEventType{"inbox.email_received"}, updated.EventTypes)

	// A new host re-arms verification.
	otherHost := strings.Replace(recv.srv.URL, "127.0.0.1", "localhost", 1)
	updated, err = owner.WebhooksUpdate(ctx, &api.WebhookEndpointRequest{URL: hookURL(t, otherHost+"/v3")}, api.WebhooksUpdateParams{ID: created.ID})
	require.NoError(t, err)
	require.True(t, updated.VerifiedAt.Null, "a new host is unverified again")
	require.False(t, updated.OwnershipConfirmed)
	res, err = owner.WebhooksVerify(ctx, api.WebhooksVerifyParams{ID: created.ID})
	require.NoError(t, err)
	require.True(t, res.Verified, res.ErrorReason.Value)

	// Another organization sees none of it: every id answers 404.
	otherPair := env.SignUp(t, "other@hooks.example")
	other := env.Client(t, otherPair.AccessToken)
	_, err = other.WebhooksVerify(ctx, api.WebhooksVerifyParams{ID: created.ID})
	requireAPIError(t, err, http.StatusNotFound, "not_found")
	_, err = other.WebhooksUpdate(ctx, &api.WebhookEndpointRequest{URL: hookURL(t, recv.srv.URL)}, api.WebhooksUpdateParams{ID: created.ID})
	requireAPIError(t, err, http.StatusNotFound, "not_found")
	_, err = other.WebhooksRotateSecret(ctx, api.WebhooksRotateSecretParams{ID: created.ID})
	requireAPIError(t, err, http.StatusNotFound, "not_found")
	requireAPIError(t, other.WebhooksDelete(ctx, api.WebhooksDeleteParams{ID: created.ID}), http.StatusNotFound, "not_found")
	otherList, err := other.WebhooksList(ctx)
	require.NoError(t, err)
	require.Empty(t, otherList.Endpoints)

	// Delete: 204, gone.
	require.NoError(t, owner.WebhooksDelete(ctx, api.WebhooksDeleteParams{ID: created.ID}))
	requireAPIError(t, owner.WebhooksDelete(ctx, api.WebhooksDeleteParams{ID: created.ID}), http.StatusNotFound, "not_found")
	list, err = owner.WebhooksList(ctx)
	require.NoError(t, err)
	require.Empty(t, list.Endpoints)

	require.Equal(t, []string{"webhook_endpoint.created", "webhook_endpoint.verified", "webhook_endpoint.verified",
		"webhook_endpoint.secret_rotated", "webhook_endpoint.updated", "webhook_endpoint.updated", "webhook_endpoint.updated",
		"webhook_endpoint.verified", "webhook_endpoint.deleted"}, webhookAuditActions(t, env, org))
}

func TestWebhookEndpointRules(t *testing.T) {
	t.Parallel()
	env := apitest.New(t) // production rules: no private addresses
	ctx := context.Background()
	pair := env.SignUp(t, "owner@rules.example")
	org := homeOrganization(t, env, pair)
	owner := env.Client(t, pair.AccessToken)

	// The SSRF probe list is refused at creation, each with a code naming the rule.
	for raw, code := range map[string]string{
		"https://127.0.0.1/hook":                    "webhook_url_ip_literal",
		"https://2130706433/hook":                   "webhook_url_ip_literal",
		"https://0177.0.0.1/hook":                   "webhook_url_ip_literal",
		"https://0x7f.1/hook":                       "webhook_url_ip_literal",
		"https://127.1/hook":                        "webhook_url_ip_literal",
		"https://10.0.0.1/hook":                     "webhook_url_ip_literal",
		"https://169.254.169.254/latest/meta-data/": "webhook_url_ip_literal",
		"https://[::1]/hook":                        "webhook_url_ip_literal",
		"https://[::ffff:169.254.169.254]/hook":     "webhook_url_ip_literal",
		"https://[fd00:ec2::254]/hook":              "webhook_url_ip_literal",
		"https://localhost/hook":                    "webhook_url_host_not_allowed",
		"https://metadata/computeMetadata/v1/":      "webhook_url_host_not_allowed",
		"http://hooks.example.com/hook":             "webhook_url_https_required",
		"https://hooks.example.com:8443/hook":       "webhook_url_port_not_allowed",
		"https://hooks.example.com:22/hook":         "webhook_url_port_not_allowed",
		"https://nowhere.invalid/hook":              "webhook_url_unresolvable_host",
	} {
		_, err := owner.WebhooksCreate(ctx, &api.WebhookEndpointRequest{URL: hookURL(t, raw)}, api.WebhooksCreateParams{})
		var se *api.ErrorStatusCode
		require.ErrorAs(t, err, &se, raw)
		require.Equal(t, http.StatusBadRequest, se.StatusCode, raw)
		require.Equal(t, code, se.Response.Code, "%s: %s", raw, se.Response.Message)
		require.NotEmpty(t, se.Response.Fix.Value, raw)
	}
	// A loopback receiver, fine for a self-hosted rig, is refused here too.
	recv := newHookReceiver(t)
	_, err := owner.WebhooksCreate(ctx, &api.WebhookEndpointRequest{URL: hookURL(t, recv.srv.URL)}, api.WebhooksCreateParams{})
	requireAPIError(t, err, http.StatusBadRequest, "webhook_url_https_required")
	require.Zero(t, recv.count())

	// Event types: known ones only (the SDK refuses unknown ones before sending, so the raw request shows the
	// server's answer); webhook.test is not subscribable.
	resp := env.Do(t, http.MethodPost, "/v1/webhooks", pair.AccessToken,
		strings.NewReader(`{"url":"https://hooks.example.com/x","event_types":["contact.created","contact.exploded"]}`),
		http.Header{"Content-Type": {"application/json"}})
	var envelope api.Error
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&envelope))
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, envelope.Message, "contact.exploded")
	_, err = owner.WebhooksCreate(ctx, &api.WebhookEndpointRequest{URL: hookURL(t, "https://hooks.example.com/x"),
		EventTypes: []api.WebhookEventType{"webhook.test"}}, api.WebhooksCreateParams{})
	requireAPIError(t, err, http.StatusBadRequest, "event_type_not_subscribable")
	_, err = owner.WebhooksCreate(ctx, &api.WebhookEndpointRequest{URL: hookURL(t, "https://hooks.example.com/x"),
		Description: api.NewOptString(strings.Repeat("d", 501))}, api.WebhooksCreateParams{})
	requireAPIError(t, err, http.StatusBadRequest, "invalid_description")

	// The catalog: every event type, canonical order, firehose flags.
	catalog, err := owner.WebhooksListEventTypes(ctx)
	require.NoError(t, err)
	require.Len(t, catalog.EventTypes, len(events.Catalog))
	byType := map[api.WebhookEventType]api.WebhookEventTypeInfo{}
	for _, e := range catalog.EventTypes {
		byType[e.Type] = e
	}
	require.True(t, byType["campaign.email_opened"].Firehose)
	require.False(t, byType["contact.created"].Firehose)
	require.Equal(t, api.WebhookEventCategoryTest, byType["webhook.test"].Category)
	require.Equal(t, api.WebhookEventType("campaign.started"), catalog.EventTypes[0].Type)

	// API keys need WEBHOOKS.
	_, err = env.Client(t, scopedKey(t, env, org, auth.ReadContacts)).WebhooksList(ctx)
	requireAPIError(t, err, http.StatusForbidden, "missing_scope")
	keyed, err := env.Client(t, scopedKey(t, env, org, auth.Webhooks)).WebhooksListEventTypes(ctx)
	require.NoError(t, err)
	require.Len(t, keyed.EventTypes, len(events.Catalog))
	require.Empty(t, webhookAuditActions(t, env, org), "nothing was created")
}

// setManagedURL points org's managed endpoint of an app at a test receiver, as if the app's host were it (app
// webhook URLs are https on a domain inside allowed_webhook_domains, which a loopback receiver cannot be).
func setManagedURL(t *testing.T, env *apitest.Env, org uuid.UUID, target string) {
	t.Helper()
	require.NoError(t, db.WithOrgTx(context.Background(), env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE webhook_endpoints SET url = $2 WHERE organization_id = $1 AND oauth_client_id IS NOT NULL`, org, target)
		if err == nil && tag.RowsAffected() != 1 {
			err = errors.New("no managed endpoint")
		}
		return err
	}))
}

func TestOAuthAppManagedWebhookEndpoints(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, apitest.AllowPrivateWebhooks())
	ctx := context.Background()
	devPair := env.SignUp(t, "dev@apphooks.example")
	dev := env.Client(t, devPair.AccessToken)
	app, err := dev.OAuthApplicationsCreate(ctx, &api.OAuthApplicationCreate{Name: "Partner CRM", RedirectUris: []string{oauthRedirect},
		Scopes: []api.OAuthScope{"read_contacts", "webhooks"}, AllowedWebhookDomains: []string{".partner.test"},
		WebhookURL: api.NewOptString("https://hooks.partner.test/outflow")}, api.OAuthApplicationsCreateParams{})
	require.NoError(t, err)
	listApp := func() []api.OAuthApplicationWebhookEndpoint {
		t.Helper()
		out, err := dev.OAuthApplicationsListWebhookEndpoints(ctx, api.OAuthApplicationsListWebhookEndpointsParams{ID: app.ID})
		require.NoError(t, err)
		return out.Endpoints
	}
	require.Empty(t, listApp(), "no organization authorized it yet")

	// An organization authorizes the app: its managed endpoint appears there, unverified.
	userPair := env.SignUp(t, "user@apphooks.example")
	userOrg := homeOrganization(t, env, userPair)
	user := env.Client(t, userPair.AccessToken)
	conf := oauthConfig(env, app.ClientID, app.ClientSecret.Value, "read_contacts", "webhooks")
	browser := newOAuthBrowser(t, env, "user@apphooks.example")
	back := browser.decide(t, browser.consent(t, conf.AuthCodeURL("s1")), userOrg, "approve")
	endpoints := listApp()
	require.Len(t, endpoints, 1)
	managed := endpoints[0]
	require.Equal(t, userOrg, managed.OrganizationID)
	require.Equal(t, "https://hooks.partner.test/outflow", managed.URL)
	require.True(t, managed.Enabled)
	require.True(t, managed.VerifiedAt.Null)
	// Its challenge is scheduled with the approval, to go out only while it still points at the app's URL.
	var challengeJobs int
	require.NoError(t, env.DB.OwnerPool(t).QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'webhook_challenge'
		AND args->>'endpoint_id' = $1 AND args->>'url' = 'https://hooks.partner.test/outflow'`, managed.ID.String()).Scan(&challengeJobs))
	require.Equal(t, 1, challengeJobs)
	orgList, err := user.WebhooksList(ctx)
	require.NoError(t, err)
	require.Len(t, orgList.Endpoints, 1)
	require.Equal(t, managed.ID, orgList.Endpoints[0].ID)
	require.Contains(t, orgList.Endpoints[0].Description, "Partner CRM")

	// Its URL and secret are the app's: the organization cannot edit, rotate or delete it.
	_, err = user.WebhooksUpdate(ctx, &api.WebhookEndpointRequest{URL: hookURL(t, "https://elsewhere.partner.test/x")}, api.WebhooksUpdateParams{ID: managed.ID})
	requireAPIError(t, err, http.StatusConflict, "webhook_endpoint_managed")
	_, err = user.WebhooksRotateSecret(ctx, api.WebhooksRotateSecretParams{ID: managed.ID})
	requireAPIError(t, err, http.StatusConflict, "webhook_endpoint_managed")
	requireAPIError(t, user.WebhooksDelete(ctx, api.WebhooksDeleteParams{ID: managed.ID}), http.StatusConflict, "webhook_endpoint_managed")

	// The challenge is signed with the app's secret; a 2xx alone does not verify an app's endpoint, the echo
	// does (here in the header).
	recv := newHookReceiver(t)
	setManagedURL(t, env, userOrg, recv.srv.URL+"/app")
	recv.respond(func(w http.ResponseWriter, _ string) { w.WriteHeader(http.StatusOK) })
	res, err := user.WebhooksVerify(ctx, api.WebhooksVerifyParams{ID: managed.ID})
	require.NoError(t, err)
	require.False(t, res.Verified)
	require.False(t, res.ChallengeEchoed)
	require.Equal(t, http.StatusOK, res.ResponseStatus.Value)
	require.Contains(t, res.ErrorReason.Value, "echo")
	c := recv.last(t, app.WebhookSecret)
	require.Equal(t, managed.ID.String(), c.Data.EndpointID)
	require.Equal(t, userOrg.String(), c.OrganizationID)
	recv.respond(func(w http.ResponseWriter, challenge string) {
		w.Header().Set(webhook.ChallengeHeader, challenge)
		w.WriteHeader(http.StatusOK)
	})
	res, err = user.WebhooksVerify(ctx, api.WebhooksVerifyParams{ID: managed.ID})
	require.NoError(t, err)
	require.True(t, res.Verified, res.ErrorReason.Value)
	require.True(t, res.ChallengeEchoed)
	orgList, err = user.WebhooksList(ctx)
	require.NoError(t, err)
	require.True(t, orgList.Endpoints[0].OwnershipConfirmed)
	require.False(t, listApp()[0].VerifiedAt.Null)

	// A new webhook_url host follows into every install and re-arms verification.
	_, err = dev.OAuthApplicationsUpdate(ctx, &api.OAuthApplicationUpdate{WebhookURL: api.NewOptString("https://eu.partner.test/v2")},
		api.OAuthApplicationsUpdateParams{ID: app.ID})
	require.NoError(t, err)
	endpoints = listApp()
	require.Len(t, endpoints, 1)
	require.Equal(t, "https://eu.partner.test/v2", endpoints[0].URL)
	require.True(t, endpoints[0].VerifiedAt.Null)

	// Revoking the grant (here its access token) removes the endpoint.
	tok, err := conf.Exchange(oauthContext(env), back.Query().Get("code"))
	require.NoError(t, err)
	require.NoError(t, env.Client(t, "").OAuthRevokeToken(ctx, &api.OAuthRevokeRequest{Token: tok.AccessToken,
		ClientID: api.NewOptString(app.ClientID), ClientSecret: api.NewOptString(app.ClientSecret.Value)}))
	require.Empty(t, listApp())
	orgList, err = user.WebhooksList(ctx)
	require.NoError(t, err)
	require.Empty(t, orgList.Endpoints)

	// Approving again makes a new one.
	browser.decide(t, browser.consent(t, conf.AuthCodeURL("s2")), userOrg, "approve")
	endpoints = listApp()
	require.Len(t, endpoints, 1)
	require.NotEqual(t, managed.ID, endpoints[0].ID)
	// Approving once more replaces the grant and with it the endpoint; refresh-token reuse then revokes the
	// grant and removes the endpoint again.
	back = browser.decide(t, browser.consent(t, conf.AuthCodeURL("s3")), userOrg, "approve")
	replaced := listApp()
	require.Len(t, replaced, 1)
	require.NotEqual(t, endpoints[0].ID, replaced[0].ID)
	tok, err = conf.Exchange(oauthContext(env), back.Query().Get("code"))
	require.NoError(t, err)
	_, err = conf.TokenSource(oauthContext(env), &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	require.NoError(t, err)
	_, err = conf.TokenSource(oauthContext(env), &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	requireOAuthError(t, err, "invalid_grant")
	require.Empty(t, listApp())

	// Another organization cannot list a foreign app's endpoints.
	_, err = user.OAuthApplicationsListWebhookEndpoints(ctx, api.OAuthApplicationsListWebhookEndpointsParams{ID: app.ID})
	requireAPIError(t, err, http.StatusNotFound, "not_found")

	// Deleting the app removes its managed endpoints in every organization.
	browser.decide(t, browser.consent(t, conf.AuthCodeURL("s4")), userOrg, "approve")
	require.Len(t, listApp(), 1)
	require.NoError(t, dev.OAuthApplicationsDelete(ctx, api.OAuthApplicationsDeleteParams{ID: app.ID}))
	orgList, err = user.WebhooksList(ctx)
	require.NoError(t, err)
	require.Empty(t, orgList.Endpoints)

	require.Equal(t, []string{"webhook_endpoint.verified"}, webhookAuditActions(t, env, userOrg),
		"the endpoint's creation and removal are part of the grant's audit entries")
}

// TestReenablingAnAutoDisabledEndpointStartsAfresh: a person turning an auto-disabled endpoint back on gets
// the whole failure window again, not a disable on the next failed attempt.
func TestReenablingAnAutoDisabledEndpointStartsAfresh(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, apitest.AllowPrivateWebhooks())
	ctx := context.Background()
	pair := env.SignUp(t, "owner@hooks.example")
	org := homeOrganization(t, env, pair)
	owner := env.Client(t, pair.AccessToken)
	recv := newHookReceiver(t)
	url := hookURL(t, recv.srv.URL+"/hook")
	created, err := owner.WebhooksCreate(ctx, &api.WebhookEndpointRequest{URL: url}, api.WebhooksCreateParams{})
	require.NoError(t, err)
	_, err = env.DB.OwnerPool(t).Exec(ctx, `UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'failing for 24 hours',
		consecutive_failures = 40, failing_since = now() - interval '25 hours' WHERE organization_id = $1 AND id = $2`, org, created.ID)
	require.NoError(t, err)

	// Editing it while it stays disabled keeps its failure record.
	upd, err := owner.WebhooksUpdate(ctx, &api.WebhookEndpointRequest{URL: url, Enabled: api.NewOptBool(false)}, api.WebhooksUpdateParams{ID: created.ID})
	require.NoError(t, err)
	require.False(t, upd.Enabled)
	require.Equal(t, 40, upd.ConsecutiveFailures)

	upd, err = owner.WebhooksUpdate(ctx, &api.WebhookEndpointRequest{URL: url}, api.WebhooksUpdateParams{ID: created.ID})
	require.NoError(t, err)
	require.True(t, upd.Enabled)
	require.Zero(t, upd.ConsecutiveFailures)
	var since *time.Time
	var reason *string
	require.NoError(t, env.DB.OwnerPool(t).QueryRow(ctx, `SELECT failing_since, disabled_reason FROM webhook_endpoints WHERE id = $1`, created.ID).Scan(&since, &reason))
	require.Nil(t, since)
	require.Nil(t, reason)
}
