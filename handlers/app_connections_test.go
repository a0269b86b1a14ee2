package handlers_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/go-faster/jx"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/webhook"
)

// appConnectionRow stores a connection row directly (creating one through the API resolves its host), with a
// secret no one can open: enough for steps that name it.
func appConnectionRow(t testing.TB, env *apitest.Env, org uuid.UUID, name string) uuid.UUID {
	t.Helper()
	id := uuid.New()
	orgExec(t, env, org, `INSERT INTO app_connections (organization_id, id, name, base_url, secret_sealed)
		VALUES ($1, $2, $3, 'https://app.example.com', '\x00')`, org, id, name)
	return id
}

// pingApp is a customer app answering pings on loopback HTTPS: 200 when the signature verifies with its
// secret, 401 otherwise.
type pingApp struct {
	srv    *httptest.Server
	mu     sync.Mutex
	secret string
	last   *http.Request
	body   []byte
}

func newPingApp(t *testing.T) *pingApp {
	t.Helper()
	a := &pingApp{}
	a.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		defer a.mu.Unlock()
		a.last, a.body = r, body
		if webhook.VerifySignature(a.secret, r.Header.Get(webhook.SignatureHeader), body, 0) != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = io.WriteString(w, `{"ok": true}`)
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *pingApp) trust(secret string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.secret = secret
}

// appEnv is an API whose calls to customer apps trust the ping app's certificate and may reach loopback.
func appEnv(t *testing.T, a *pingApp) (*apitest.Env, uuid.UUID, *api.Client) {
	t.Helper()
	env := apitest.NewWith(t, apitest.Parts{AppsTLS: a.srv.Client().Transport.(*http.Transport).TLSClientConfig},
		apitest.AllowPrivateWebhooks())
	boot := env.Bootstrap(t, "acme")
	return env, boot.OrganizationID, env.Client(t, boot.APIKey)
}

func mustURL(t testing.TB, raw string) url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return *u
}

func appActionStep(conn uuid.UUID) api.CampaignStepCreate {
	return api.CampaignStepCreate{Kind: api.NewOptCampaignStepCreateKind(api.CampaignStepCreateKindAction),
		Action: api.NewOptCampaignStepCreateAction(api.CampaignStepCreateAction{"type": jx.Raw(`"app_action"`),
			"app_connection_id": jx.Raw(`"` + conn.String() + `"`), "path": jx.Raw(`"/lookup"`), "output_key": jx.Raw(`"crm"`)})}
}

func TestAppConnectionsAreCheckedStoredWithSealedSecretsAndKeptWhileAStepCallsThem(t *testing.T) {
	t.Parallel()
	a := newPingApp(t)
	env, org, c := appEnv(t, a)
	ctx := context.Background()

	created, err := c.AppConnectionsCreate(ctx, &api.AppConnectionsCreateReq{Name: "  CRM  ",
		BaseURL: mustURL(t, a.srv.URL+"/hooks?token=x#part")})
	require.NoError(t, err)
	conn := created.Connection
	require.Equal(t, "CRM", conn.Name, "the name is trimmed")
	require.Equal(t, a.srv.URL+"/hooks", conn.BaseURL.String(), "query and fragment are dropped")
	require.True(t, strings.HasPrefix(created.Secret, "appsec_"), created.Secret)
	require.Greater(t, len(created.Secret), 40)
	var sealed []byte
	require.NoError(t, db.WithOrgTx(ctx, env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT secret_sealed FROM app_connections WHERE id = $1`, conn.ID).Scan(&sealed)
	}))
	require.NotContains(t, string(sealed), strings.TrimPrefix(created.Secret, "appsec_"), "the secret is stored sealed")

	got, err := c.AppConnectionsGet(ctx, api.AppConnectionsGetParams{ID: conn.ID})
	require.NoError(t, err)
	require.Equal(t, conn, *got)
	raw, err := json.Marshal(got)
	require.NoError(t, err)
	require.NotContains(t, string(raw), "secret", "a read never shows the secret")

	for name, tc := range map[string]struct {
		req    api.AppConnectionsCreateReq
		status int
		code   string
	}{
		"a name taken in another case": {api.AppConnectionsCreateReq{Name: "crm", BaseURL: mustURL(t, a.srv.URL)}, 409, "app_connection_name_taken"},
		"a blank name":                 {api.AppConnectionsCreateReq{Name: "   ", BaseURL: mustURL(t, a.srv.URL)}, 400, "invalid_name"},
		"plain http":                   {api.AppConnectionsCreateReq{Name: "Plain", BaseURL: mustURL(t, strings.Replace(a.srv.URL, "https:", "http:", 1))}, 400, "invalid_base_url"},
		"credentials in the URL":       {api.AppConnectionsCreateReq{Name: "Creds", BaseURL: mustURL(t, "https://user:pw@"+strings.TrimPrefix(a.srv.URL, "https://"))}, 400, "invalid_base_url"},
		"a cloud metadata address":     {api.AppConnectionsCreateReq{Name: "Meta", BaseURL: mustURL(t, "https://169.254.169.254/latest")}, 400, "invalid_base_url"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := c.AppConnectionsCreate(ctx, &tc.req)
			requireAPIError(t, err, tc.status, tc.code)
		})
	}
	_, err = c.AppConnectionsCreate(ctx, &api.AppConnectionsCreateReq{Name: strings.Repeat("n", 101), BaseURL: mustURL(t, a.srv.URL)})
	require.Error(t, err, "a name over 100 characters is refused")

	other, err := c.AppConnectionsCreate(ctx, &api.AppConnectionsCreateReq{Name: "Billing", BaseURL: mustURL(t, a.srv.URL)})
	require.NoError(t, err)
	_, err = c.AppConnectionsUpdate(ctx, &api.AppConnectionsUpdateReq{Name: api.NewOptString("CRM")},
		api.AppConnectionsUpdateParams{ID: other.Connection.ID})
	requireAPIError(t, err, 409, "app_connection_name_taken")
	renamed, err := c.AppConnectionsUpdate(ctx, &api.AppConnectionsUpdateReq{Name: api.NewOptString("Sales CRM")},
		api.AppConnectionsUpdateParams{ID: conn.ID})
	require.NoError(t, err)
	require.Equal(t, "Sales CRM", renamed.Name)
	require.Equal(t, conn.BaseURL, renamed.BaseURL, "a PATCH changes only what it sends")
	list, err := c.AppConnectionsList(ctx)
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{other.Connection.ID, conn.ID}, []uuid.UUID{list.Data[0].ID, list.Data[1].ID}, "newest first")

	// A step may name only a connection of its organization, and keeps it from being deleted.
	stranger := env.Client(t, env.Bootstrap(t, "other").APIKey)
	_, err = stranger.AppConnectionsGet(ctx, api.AppConnectionsGetParams{ID: conn.ID})
	requireAPIError(t, err, 404, "app_connection_not_found")
	_, err = stranger.CampaignsCreate(ctx, &api.CampaignCreate{Name: "Theirs", Steps: []api.CampaignStepCreate{appActionStep(conn.ID)}},
		api.CampaignsCreateParams{})
	requireAPIError(t, err, 400, "invalid_step")
	require.Contains(t, err.Error(), "action.app_connection_id")
	camp := campCreate(t, c, api.CampaignCreate{Name: "Enrich", Steps: []api.CampaignStepCreate{appActionStep(conn.ID),
		{Subject: api.NewOptString("Hi"), BodyPlain: api.NewOptString("Hello")}}})
	_, err = c.AppConnectionsDelete(ctx, api.AppConnectionsDeleteParams{ID: conn.ID})
	requireAPIError(t, err, 409, "app_connection_in_use")
	err = c.CampaignsDelete(ctx, api.CampaignsDeleteParams{ID: camp.ID})
	require.NoError(t, err)
	deleted, err := c.AppConnectionsDelete(ctx, api.AppConnectionsDeleteParams{ID: conn.ID})
	require.NoError(t, err)
	require.Equal(t, jx.Raw("true"), deleted["deleted"])
	_, err = c.AppConnectionsDelete(ctx, api.AppConnectionsDeleteParams{ID: conn.ID})
	requireAPIError(t, err, 404, "app_connection_not_found")

	rotated, err := c.AppConnectionsRotateSecret(ctx, api.AppConnectionsRotateSecretParams{ID: other.Connection.ID})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(rotated.Secret.Value, "appsec_"))
	require.NotEqual(t, other.Secret, rotated.Secret.Value)
	var actions []string
	require.NoError(t, db.WithOrgTx(ctx, env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT action || ' ' || event || ' ' || metadata::text FROM audit_log
			WHERE target_type = 'app_connection' ORDER BY id`)
		if err != nil {
			return err
		}
		actions, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}))
	require.Len(t, actions, 5)
	for i, want := range []string{"create app_connection.created", "create app_connection.created", "update app_connection.updated",
		"delete app_connection.deleted", "rotate_secret app_connection.secret_rotated"} {
		require.True(t, strings.HasPrefix(actions[i], want), actions[i])
		for _, s := range []string{created.Secret, other.Secret, rotated.Secret.Value} {
			require.NotContains(t, actions[i], strings.TrimPrefix(s, "appsec_"), "an audit entry never holds a secret")
		}
	}
}

func TestAnAppConnectionTestPingsSignedAndSaysWhyItFailed(t *testing.T) {
	t.Parallel()
	a := newPingApp(t)
	_, _, c := appEnv(t, a)
	ctx := context.Background()
	created, err := c.AppConnectionsCreate(ctx, &api.AppConnectionsCreateReq{Name: "CRM", BaseURL: mustURL(t, a.srv.URL+"/outflow")})
	require.NoError(t, err)
	id := created.Connection.ID
	a.trust(created.Secret)

	res, err := c.AppConnectionsTest(ctx, api.AppConnectionsTestParams{ID: id})
	require.NoError(t, err)
	require.True(t, res.DNS && res.TLS && res.Connection && res.Authentication, "%+v", res)
	require.Equal(t, api.NewOptInt(200), res.Status)
	require.False(t, res.Error.Set)
	require.Equal(t, "/outflow", a.last.URL.Path)
	require.Equal(t, "app.ping", a.last.Header.Get(webhook.EventHeader))
	require.Equal(t, a.last.Header.Get(webhook.EventIDHeader), a.last.Header.Get("Idempotency-Key"))
	var ping struct {
		ID, RunMode, RequestedAt string
		Ping                     bool
	}
	require.NoError(t, json.Unmarshal(a.body, &ping))
	require.Equal(t, "ping:"+a.last.Header.Get(webhook.EventIDHeader), ping.ID)
	require.True(t, ping.Ping)
	require.Contains(t, string(a.body), `"run_mode":"test"`)

	// After a rotation the app still holding the old secret refuses the ping.
	_, err = c.AppConnectionsRotateSecret(ctx, api.AppConnectionsRotateSecretParams{ID: id})
	require.NoError(t, err)
	res, err = c.AppConnectionsTest(ctx, api.AppConnectionsTestParams{ID: id})
	require.NoError(t, err)
	require.True(t, res.Connection && res.TLS)
	require.False(t, res.Authentication)
	require.Equal(t, api.NewOptInt(401), res.Status)
	require.Equal(t, "app_connection_failed", res.Error.Value.Code)
	require.Contains(t, res.Error.Value.Fix.Value, "X-Service-Signature")

	// Nothing listens: no connection, no TLS, and a fix that says so.
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	gone := "https://" + closed.Addr().String()
	require.NoError(t, closed.Close())
	refused, err := c.AppConnectionsCreate(ctx, &api.AppConnectionsCreateReq{Name: "Gone", BaseURL: mustURL(t, gone)})
	require.NoError(t, err)
	res, err = c.AppConnectionsTest(ctx, api.AppConnectionsTestParams{ID: refused.Connection.ID})
	require.NoError(t, err, "a failed test still answers 200")
	require.True(t, res.DNS)
	require.False(t, res.Connection || res.TLS || res.Authentication)
	require.False(t, res.Status.Set)
	require.Equal(t, "app_connection_failed", res.Error.Value.Code)
	require.Contains(t, res.Error.Value.Message, "the app could not be reached")
	require.Contains(t, res.Error.Value.Fix.Value, "Check that the app is running")

	// A server that speaks no TLS: connected, but no handshake.
	plain := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(plain.Close)
	noTLS, err := c.AppConnectionsCreate(ctx, &api.AppConnectionsCreateReq{Name: "Plain",
		BaseURL: mustURL(t, strings.Replace(plain.URL, "http:", "https:", 1))})
	require.NoError(t, err)
	res, err = c.AppConnectionsTest(ctx, api.AppConnectionsTestParams{ID: noTLS.Connection.ID})
	require.NoError(t, err)
	require.True(t, res.Connection)
	require.False(t, res.TLS || res.Authentication)
	require.Contains(t, res.Error.Value.Message, "The TLS handshake failed")

	_, err = c.AppConnectionsTest(ctx, api.AppConnectionsTestParams{ID: uuid.New()})
	requireAPIError(t, err, 404, "app_connection_not_found")
}
