package handlers_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/testkit/oidctest"
)

func TestGoogleBrowserSignIn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSocialEnv(t)
	s.google.SignInAs(oidctest.User{Subject: "g-ada", Email: "ada@example.com", EmailVerified: true, GivenName: "Ada"})

	start, idp := s.begin(t, "google")
	require.Equal(t, "openid email profile", start.URL.Query().Get("scope"))
	require.Equal(t, "google-client", start.URL.Query().Get("client_id"))
	_, params := idp.Authorize(t, start.URL.String())
	flow := browserFlow{binding: start.Binding, location: s.callback(t, "google", params, false)}
	code := flow.code(t)

	// The provider's answer is accepted once.
	require.Equal(t, "invalid_state", browserFlow{location: s.callback(t, "google", params, false)}.ssoError(t))

	// The handoff code needs the binding of the browser that began: another browser is refused and the code
	// stays usable by the right one.
	_, err := s.public.AuthSSOExchange(ctx, &api.SSOExchangeRequest{Code: code, Binding: "another-browser"})
	requireAPIError(t, err, 401, "sso_wrong_browser")
	res, err := s.public.AuthSSOExchange(ctx, &api.SSOExchangeRequest{Code: code, Binding: flow.binding})
	require.NoError(t, err)
	requireTokens(t, res)
	require.Equal(t, "google", s.sessionProvider(t, res.AccessToken.Value))
	_, first, _, verified := s.userByEmail(t, "ada@example.com")
	require.Equal(t, "Ada", first)
	require.True(t, verified)

	// Single use.
	_, err = s.public.AuthSSOExchange(ctx, &api.SSOExchangeRequest{Code: code, Binding: flow.binding})
	requireAPIError(t, err, 401, "invalid_code")
	_, err = s.public.AuthSSOExchange(ctx, &api.SSOExchangeRequest{Code: "forged.code", Binding: flow.binding})
	requireAPIError(t, err, 401, "invalid_code")

	// The older exchange name behaves the same; a second sign-in reaches the same account.
	again := s.signIn(t, "google")
	//lint:ignore SA1019 the older name is in the contract and must keep working
	_, err = s.public.AuthOidcExchange(ctx, &api.SSOExchangeRequest{Code: again.code(t), Binding: flow.binding})
	requireAPIError(t, err, 401, "sso_wrong_browser")
	//lint:ignore SA1019 the older name is in the contract and must keep working
	res, err = s.public.AuthOidcExchange(ctx, &api.SSOExchangeRequest{Code: again.code(t), Binding: again.binding})
	require.NoError(t, err)
	requireTokens(t, res)
	require.Equal(t, 1, s.userCount(t))
}

func TestHandoffCodeExpiresAfterSixtySeconds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSocialEnv(t)
	flow := s.signIn(t, "oidc")
	var ttl time.Duration
	require.NoError(t, s.owner.QueryRow(ctx,
		"SELECT (expires_at - created_at) FROM auth_challenges WHERE kind = 'sso_handoff'").Scan(&ttl))
	require.InDelta(t, 60, ttl.Seconds(), 1)
	s.expire(t, "sso_handoff")
	_, err := s.public.AuthSSOExchange(ctx, &api.SSOExchangeRequest{Code: flow.code(t), Binding: flow.binding})
	requireAPIError(t, err, 401, "invalid_code")
}

func TestAppleBrowserSignInWithFormPost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSocialEnv(t)
	s.apple.SignInAs(oidctest.User{Subject: "a-grace", Email: "grace@example.com", EmailVerified: true,
		GivenName: "Grace", FamilyName: "Hopper"})

	start, idp := s.begin(t, "apple")
	require.Equal(t, "form_post", start.URL.Query().Get("response_mode"))
	require.Equal(t, "openid name email", start.URL.Query().Get("scope"))
	_, params := idp.Authorize(t, start.URL.String())
	require.NotEmpty(t, params.Get("user"), "Apple posts the name on first consent")
	// The in-process Apple accepts only client_secret_post, as Apple does.
	flow := browserFlow{binding: start.Binding, location: s.callback(t, "apple", params, true)}
	res, err := s.public.AuthSSOExchange(ctx, &api.SSOExchangeRequest{Code: flow.code(t), Binding: flow.binding})
	require.NoError(t, err)
	requireTokens(t, res)
	require.Equal(t, "apple", s.sessionProvider(t, res.AccessToken.Value))
	_, first, last, _ := s.userByEmail(t, "grace@example.com")
	require.Equal(t, "Grace", first)
	require.Equal(t, "Hopper", last)

	// A code arriving in the query string is handled like the form.
	start, idp = s.begin(t, "apple")
	_, params = idp.Authorize(t, start.URL.String())
	flow = browserFlow{binding: start.Binding, location: s.callback(t, "apple", params, false)}
	res, err = s.public.AuthSSOExchange(ctx, &api.SSOExchangeRequest{Code: flow.code(t), Binding: flow.binding})
	require.NoError(t, err)
	requireTokens(t, res)

	// A refusal comes back through either form and lands on the login page.
	s.apple.Refuse("user_cancelled_authorize")
	for _, formPost := range []bool{true, false} {
		start, idp = s.begin(t, "apple")
		_, params = idp.Authorize(t, start.URL.String())
		require.Equal(t, "user_cancelled_authorize", params.Get("error"))
		require.Equal(t, "access_denied", browserFlow{location: s.callback(t, "apple", params, formPost)}.ssoError(t))
	}
}

func TestBrowserSignInFailuresRedirectWithSSOError(t *testing.T) {
	t.Parallel()
	s := newSocialEnv(t)
	s.idp.SignInAs(oidctest.User{Subject: "o-ada", Email: "ada@example.com", EmailVerified: true})

	// failWith runs a flow through the generic provider with the token endpoint's ID token changed by tamper.
	failWith := func(tamper func(oidctest.Claims)) string {
		s.idp.Tamper(tamper)
		defer s.idp.Tamper(nil)
		return s.signIn(t, "oidc").ssoError(t)
	}
	require.Equal(t, "verification_failed", failWith(func(c oidctest.Claims) { c["nonce"] = "another-request" }))
	require.Equal(t, "verification_failed", failWith(func(c oidctest.Claims) { delete(c, "nonce") }))
	require.Equal(t, "verification_failed", failWith(func(c oidctest.Claims) { c["aud"] = "someone-else" }))
	require.Equal(t, "verification_failed", failWith(func(c oidctest.Claims) { c["iss"] = "https://evil.example" }))
	require.Equal(t, "verification_failed", failWith(func(c oidctest.Claims) { c["exp"] = time.Now().Add(-time.Hour).Unix() }))
	require.Equal(t, "email_unverified", failWith(func(c oidctest.Claims) { c["email_verified"] = false }))

	start, idp := s.begin(t, "oidc")
	_, params := idp.Authorize(t, start.URL.String())
	for _, tc := range []struct {
		params url.Values
		want   string
	}{
		{url.Values{"code": params["code"], "state": {"forged.state"}}, "invalid_state"},
		{url.Values{"code": params["code"]}, "invalid_state"},
		{url.Values{"code": {"bogus"}, "state": params["state"]}, "verification_failed"},
	} {
		require.Equal(t, tc.want, browserFlow{location: s.callback(t, "oidc", tc.params, false)}.ssoError(t), tc.params)
	}
	// The state was spent by the failed attempt with a bogus code.
	require.Equal(t, "invalid_state", browserFlow{location: s.callback(t, "oidc", params, false)}.ssoError(t))

	// A state begun for one provider is not accepted by another's callback.
	start, idp = s.begin(t, "google")
	_, params = idp.Authorize(t, start.URL.String())
	require.Equal(t, "invalid_state", browserFlow{location: s.callback(t, "oidc", params, false)}.ssoError(t))

	// An expired state.
	start, idp = s.begin(t, "oidc")
	_, params = idp.Authorize(t, start.URL.String())
	s.expire(t, "sso_state")
	require.Equal(t, "invalid_state", browserFlow{location: s.callback(t, "oidc", params, false)}.ssoError(t))

	// The person refused at the provider.
	s.idp.Refuse("access_denied")
	require.Equal(t, "access_denied", s.signIn(t, "oidc").ssoError(t))
	require.Equal(t, 0, s.userCount(t))
}

func TestBrowserSignInAsksForTheSecondFactor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSocialEnv(t)
	s.idp.SignInAs(oidctest.User{Subject: "o-ada", Email: "ada@example.com", EmailVerified: true})
	flow := s.signIn(t, "oidc")
	res, err := s.public.AuthSSOExchange(ctx, &api.SSOExchangeRequest{Code: flow.code(t), Binding: flow.binding})
	require.NoError(t, err)
	requireTokens(t, res)
	require.Equal(t, "oidc", s.sessionProvider(t, res.AccessToken.Value))
	userID, _, _, _ := s.userByEmail(t, "ada@example.com")
	s.enableTwoFA(t, userID)

	flow = s.signIn(t, "oidc")
	res, err = s.public.AuthSSOExchange(ctx, &api.SSOExchangeRequest{Code: flow.code(t), Binding: flow.binding})
	require.NoError(t, err)
	requireTwoFAChallenge(t, res)
}
