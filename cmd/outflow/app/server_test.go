package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/httpmw"
)

// readEnvelope decodes an error body and checks the fields every error carries.
func readEnvelope(t *testing.T, resp *http.Response, status int, code string) apierror.Envelope {
	t.Helper()
	require.Equal(t, status, resp.StatusCode)
	require.Equal(t, "application/json; charset=utf-8", resp.Header.Get("Content-Type"))
	var env apierror.Envelope
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
	require.Equal(t, code, env.Code)
	require.Equal(t, apierror.Word(status), env.Error)
	require.NotEmpty(t, env.Message)
	require.NotEmpty(t, env.RequestID)
	require.Equal(t, resp.Header.Get(httpmw.RequestIDHeader), env.RequestID, "the body and the header name the same request")
	return env
}

func TestReadinessThroughTheSDK(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	key := env.Bootstrap(t, "acme").APIKey
	ctx := context.Background()

	res, err := env.Client(t, key).SystemGetReadiness(ctx)
	require.NoError(t, err)
	byName := map[string]api.ReadinessCheck{}
	for _, c := range res.Checks {
		byName[c.Name] = c
	}
	require.True(t, byName["database"].Ok)
	require.True(t, byName["migrations"].Ok, byName["migrations"].Detail.Value)
	require.False(t, byName["workers"].Ok, "no worker runs yet")
	require.Contains(t, byName["workers"].Fix.Value, "--role worker")
	require.False(t, byName["scheduler"].Ok)
	require.False(t, res.Ready)

	// Start a worker against the same database: leadership and the first heartbeat make it ready.
	env.StartWorkers(t)
	require.Eventually(t, func() bool {
		res, err := env.Client(t, key).SystemGetReadiness(ctx)
		return err == nil && res.Ready
	}, 20*time.Second, 100*time.Millisecond)
}

func TestErrorEnvelopeForEverySource(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")

	t.Run("unknown route under /v1", func(t *testing.T) {
		e := readEnvelope(t, env.Do(t, "GET", "/v1/nope", boot.APIKey, nil, nil), 404, "route_not_found")
		require.Contains(t, e.Message, "/v1/nope")
	})
	t.Run("unknown route outside /v1", func(t *testing.T) {
		readEnvelope(t, env.Do(t, "GET", "/nope", "", nil, nil), 404, "route_not_found")
	})
	t.Run("wrong method", func(t *testing.T) {
		resp := env.Do(t, "DELETE", "/v1/system/readiness", boot.APIKey, nil, nil)
		require.Equal(t, "GET", resp.Header.Get("Allow"))
		readEnvelope(t, resp, 405, "method_not_allowed")
	})
	t.Run("missing credential", func(t *testing.T) {
		readEnvelope(t, env.Do(t, "GET", "/v1/system/readiness", "", nil, nil), 401, "missing_credential")
	})
	t.Run("invalid credential through the SDK", func(t *testing.T) {
		_, err := env.Client(t, "ofk_"+strings.Repeat("A", 43)).SystemGetReadiness(context.Background())
		var se *api.ErrorStatusCode
		require.ErrorAs(t, err, &se)
		require.Equal(t, 401, se.StatusCode)
		require.Equal(t, "invalid_credential", se.Response.Code)
		require.Equal(t, "unauthorized", se.Response.Error)
		require.NotEmpty(t, se.Response.RequestID)
	})
	t.Run("not a key at all", func(t *testing.T) {
		readEnvelope(t, env.Do(t, "GET", "/v1/system/readiness", "hello", nil, nil), 401, "invalid_credential")
	})
	t.Run("oversized idempotent body", func(t *testing.T) {
		big := strings.NewReader(strings.Repeat("x", 11<<20))
		resp := env.Do(t, "POST", "/v1/system/readiness", boot.APIKey, big, http.Header{"Idempotency-Key": {"k1"}})
		readEnvelope(t, resp, 413, "request_too_large")
	})
}

func TestRevokedAndExpiredKeysAuthenticateNothing(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	owner := env.DB.OwnerPool(t)
	ctx := context.Background()
	client := env.Client(t, boot.APIKey)

	_, err := client.SystemGetReadiness(ctx)
	require.NoError(t, err)

	_, err = owner.Exec(ctx, "UPDATE api_keys SET expires_at = now() - interval '1 second'")
	require.NoError(t, err)
	_, err = client.SystemGetReadiness(ctx)
	var se *api.ErrorStatusCode
	require.ErrorAs(t, err, &se)
	require.Equal(t, "invalid_credential", se.Response.Code)

	_, err = owner.Exec(ctx, "UPDATE api_keys SET expires_at = NULL, status = 'revoked'")
	require.NoError(t, err)
	_, err = client.SystemGetReadiness(ctx)
	require.ErrorAs(t, err, &se)
	require.Equal(t, 401, se.StatusCode)
}

func TestRequestIDIsAcceptedOrGenerated(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)

	resp := env.Do(t, "GET", "/v1/nope", "", nil, http.Header{"X-Request-Id": {"client-chosen-42"}})
	e := readEnvelope(t, resp, 404, "route_not_found")
	require.Equal(t, "client-chosen-42", e.RequestID)

	resp = env.Do(t, "GET", "/v1/nope", "", nil, http.Header{"X-Request-Id": {"has spaces\tand tabs"}})
	e = readEnvelope(t, resp, 404, "route_not_found")
	require.True(t, strings.HasPrefix(e.RequestID, "req_"), "an unusable id is replaced, got %q", e.RequestID)

	resp = env.Do(t, "GET", "/healthz", "", nil, nil)
	require.Equal(t, 200, resp.StatusCode)
	require.NotEmpty(t, resp.Header.Get(httpmw.RequestIDHeader))
}

func TestHealthzAndMetricsArePublic(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	key := env.Bootstrap(t, "acme").APIKey
	_, err := env.Client(t, key).SystemGetReadiness(context.Background())
	require.NoError(t, err)

	resp := env.Do(t, "GET", "/healthz", "", nil, nil)
	require.Equal(t, 200, resp.StatusCode)
	body, _ := io.ReadAll(resp.Body)
	require.JSONEq(t, `{"status":"ok"}`, string(body))

	resp = env.Do(t, "GET", "/metrics", "", nil, nil)
	require.Equal(t, 200, resp.StatusCode)
	body, _ = io.ReadAll(resp.Body)
	require.Contains(t, string(body), `outflow_http_requests_total{method="GET",operation="system_get_readiness",status="200"} 1`)
}

func TestPublicPathsOutsideV1AreServed(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	// The discovery documents and the consent page are served at the root (an unknown client is a plain 400,
	// never a redirect).
	for _, path := range []string{"/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource",
		"/.well-known/oauth-protected-resource/v1/mcp"} {
		resp := env.Do(t, "GET", path, "", nil, nil)
		require.Equal(t, 200, resp.StatusCode, path)
		require.Contains(t, resp.Header.Get("Content-Type"), "application/json")
	}
	resp := env.Do(t, "GET", "/oauth/authorize?response_type=code&client_id=c&redirect_uri=https%3A%2F%2Fexample.com&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256", "", nil, nil)
	require.Equal(t, 400, resp.StatusCode)
	require.Empty(t, resp.Header.Get("Location"))
	// The unsubscribe link is served at the root too: a token it does not honour is a 404 in the envelope.
	readEnvelope(t, env.Do(t, "GET", "/u/sometoken", "", nil, nil), 404, "unsubscribe_link_not_found")
	// Outside those prefixes the root is not an API.
	readEnvelope(t, env.Do(t, "GET", "/system/readiness", "", nil, nil), 404, "route_not_found")
}
