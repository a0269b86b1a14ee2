package handlers_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

// lastHeaders records the headers of the last response a client received: the SDK returns a 401 as an
// *api.ErrorStatusCode without them.
type lastHeaders struct {
	base   http.RoundTripper
	mu     sync.Mutex
	header http.Header
}

func (l *lastHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(r)
	if err == nil {
		l.mu.Lock()
		l.header = resp.Header
		l.mu.Unlock()
	}
	return resp, err
}

func (l *lastHeaders) challenge() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.header.Get("WWW-Authenticate")
}

type tokenSource string

func (s tokenSource) BearerAuth(context.Context, api.OperationName) (api.BearerAuth, error) {
	return api.BearerAuth{Token: string(s)}, nil
}

// challengeClient is a generated-SDK client sending token, and the recorder of its responses' headers.
func challengeClient(t *testing.T, env *apitest.Env, token string) (*api.Client, *lastHeaders) {
	t.Helper()
	rec := &lastHeaders{base: env.Server.Client().Transport}
	c, err := api.NewClient(env.Server.URL+"/v1", tokenSource(token), api.WithClient(&http.Client{Transport: rec}))
	require.NoError(t, err)
	return c, rec
}

func TestRESTUnauthorizedAnswersCarryABearerChallenge(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	const plain = `Bearer realm="outflow"`
	const invalid = `Bearer realm="outflow", error="invalid_token"`

	// No credential at all: the plain challenge, no error code (RFC 6750 section 3.1).
	resp := env.Do(t, http.MethodGet, "/v1/api-keys", "", nil, nil)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Equal(t, plain, resp.Header.Get("WWW-Authenticate"))
	empty, rec := challengeClient(t, env, "")
	_, err := empty.APIKeysList(ctx, api.APIKeysListParams{})
	requireAPIError(t, err, 401, "missing_credential")
	require.Equal(t, plain, rec.challenge())

	// A malformed key authenticates nothing: invalid_token.
	malformed, rec := challengeClient(t, env, "ofk_not-a-key")
	_, err = malformed.APIKeysList(ctx, api.APIKeysListParams{})
	requireAPIError(t, err, 401, "invalid_credential")
	require.Equal(t, invalid, rec.challenge())

	// A revoked key: accepted before the revocation, then invalid_token.
	admin := env.Client(t, boot.APIKey)
	key := newKey(t, admin, api.CreateAPIKey{Name: "soon revoked", Permissions: int64(auth.FullAccess)})
	revoked, rec := challengeClient(t, env, key.Secret)
	_, err = revoked.APIKeysListPermissions(ctx)
	require.NoError(t, err)
	require.Empty(t, rec.challenge())
	_, err = admin.APIKeysRevoke(ctx, api.APIKeysRevokeParams{ID: key.ID})
	require.NoError(t, err)
	_, err = revoked.APIKeysListPermissions(ctx)
	requireAPIError(t, err, 401, "invalid_credential")
	require.Equal(t, invalid, rec.challenge())

	// A 401 that is not about the token (a wrong current password under a valid session) still challenges,
	// without claiming the token is invalid.
	session, rec := challengeClient(t, env, env.SignIn(t, "owner@acme.example", apitest.Password).AccessToken)
	err = session.AuthChangePassword(ctx, &api.ChangePasswordRequest{CurrentPassword: "nope nope nope", NewPassword: "a fresh passphrase"}, api.AuthChangePasswordParams{})
	requireAPIError(t, err, 401, "invalid_credentials")
	require.Equal(t, plain, rec.challenge())
}
