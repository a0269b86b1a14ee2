package handlers_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/internal/testkit/oidctest"
)

// socialEnv is a deployment with Google, Apple and a generic OpenID Connect provider, each a real in-process
// provider.
type socialEnv struct {
	env                *apitest.Env
	google, apple, idp *oidctest.Provider
	owner              *pgxpool.Pool
	// public is an anonymous SDK client; browser is one that, like a browser told to stop at redirects,
	// returns each 302 instead of following it.
	public, browser *api.Client
}

func newSocialEnv(t *testing.T, opts ...apitest.Option) *socialEnv {
	t.Helper()
	s := &socialEnv{
		google: oidctest.New(t, oidctest.Options{ClientID: "google-client", ClientSecret: "google-secret"}),
		apple:  oidctest.New(t, oidctest.Options{ClientID: "com.example.app", ClientSecret: "apple-secret", AuthMethod: "client_secret_post"}),
		idp:    oidctest.New(t, oidctest.Options{ClientID: "outflow", ClientSecret: "idp-secret"}),
	}
	opts = append([]apitest.Option{func(c *config.Config) {
		c.Google, c.Apple, c.OIDC = s.google.ProviderConfig(), s.apple.ProviderConfig(), s.idp.ProviderConfig()
	}}, opts...)
	s.env = apitest.New(t, opts...)
	s.owner = s.env.DB.OwnerPool(t)
	s.public = s.env.Client(t, "")
	s.browser = browserClient(t, s.env)
	return s
}

// browserClient returns an anonymous SDK client that returns each 302 instead of following it.
func browserClient(t *testing.T, env *apitest.Env) *api.Client {
	t.Helper()
	hc := *env.Server.Client()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c, err := api.NewClient(env.Server.URL+"/v1", noCredential{}, api.WithClient(&hc))
	require.NoError(t, err)
	return c
}

type noCredential struct{}

func (noCredential) BearerAuth(context.Context, api.OperationName) (api.BearerAuth, error) {
	return api.BearerAuth{}, nil
}

func (s *socialEnv) userCount(t *testing.T) int {
	t.Helper()
	var n int
	require.NoError(t, s.owner.QueryRow(context.Background(), "SELECT count(*) FROM users").Scan(&n))
	return n
}

func (s *socialEnv) userByEmail(t *testing.T, email string) (id uuid.UUID, first, last string, verified bool) {
	t.Helper()
	err := s.owner.QueryRow(context.Background(),
		"SELECT id, first_name, last_name, email_verified_at IS NOT NULL FROM users WHERE email = $1", email).
		Scan(&id, &first, &last, &verified)
	require.NoError(t, err)
	return id, first, last, verified
}

func (s *socialEnv) enableTwoFA(t *testing.T, userID uuid.UUID) {
	t.Helper()
	_, err := s.owner.Exec(context.Background(),
		"INSERT INTO user_two_factor (user_id, secret_sealed, enabled_at) VALUES ($1, 'x', now())", userID)
	require.NoError(t, err)
}

// expire moves every challenge of kind past its expiry.
func (s *socialEnv) expire(t *testing.T, kind string) {
	t.Helper()
	_, err := s.owner.Exec(context.Background(),
		"UPDATE auth_challenges SET expires_at = now() - interval '1 second' WHERE kind = $1", kind)
	require.NoError(t, err)
}

// browserFlow is one browser sign-in as far as the web app's landing page.
type browserFlow struct {
	binding  string
	location *url.URL
}

// code returns the handoff code of a successful flow.
func (f browserFlow) code(t *testing.T) string {
	t.Helper()
	require.Equal(t, "/auth/sso", f.location.Path, f.location.String())
	code := f.location.Query().Get("code")
	require.NotEmpty(t, code)
	return code
}

// ssoError returns the sso_error of a failed flow.
func (f browserFlow) ssoError(t *testing.T) string {
	t.Helper()
	require.Equal(t, "/auth/login", f.location.Path, f.location.String())
	return f.location.Query().Get("sso_error")
}

// begin calls the begin operation of provider and checks the authorization request it builds.
func (s *socialEnv) begin(t *testing.T, provider string) (*api.AuthBrowserSignInStart, *oidctest.Provider) {
	t.Helper()
	ctx := context.Background()
	var (
		start *api.AuthBrowserSignInStart
		err   error
		idp   *oidctest.Provider
	)
	switch provider {
	case "google":
		start, err = s.public.AuthGoogleBegin(ctx)
		idp = s.google
	case "apple":
		start, err = s.public.AuthAppleBegin(ctx)
		idp = s.apple
	default:
		start, err = s.public.AuthOidcBegin(ctx)
		idp = s.idp
	}
	require.NoError(t, err)
	require.NotEmpty(t, start.Binding)
	q := start.URL.Query()
	require.Equal(t, idp.Issuer+"/authorize", start.URL.Scheme+"://"+start.URL.Host+start.URL.Path)
	require.Equal(t, s.env.Config.PublicURL+"/v1/auth/"+provider+"/callback", q.Get("redirect_uri"))
	require.Equal(t, "code", q.Get("response_type"))
	require.Equal(t, "S256", q.Get("code_challenge_method"))
	require.NotEmpty(t, q.Get("code_challenge"))
	require.NotEmpty(t, q.Get("state"))
	require.NotEmpty(t, q.Get("nonce"))
	require.NotContains(t, start.URL.String(), start.Binding, "the binding never leaves the browser")
	return start, idp
}

// callback delivers the provider's answer to the API's callback the way the provider sends the browser.
func (s *socialEnv) callback(t *testing.T, provider string, params url.Values, formPost bool) *url.URL {
	t.Helper()
	ctx := context.Background()
	opt := func(k string) api.OptString {
		if v, ok := params[k]; ok {
			return api.NewOptString(v[0])
		}
		return api.OptString{}
	}
	var loc string
	switch {
	case provider == "google":
		res, err := s.browser.AuthGoogleCallback(ctx, api.AuthGoogleCallbackParams{Code: opt("code"), State: opt("state"), Error: opt("error")})
		require.NoError(t, err)
		loc = res.Location
	case provider == "apple" && formPost:
		res, err := s.browser.AuthAppleCallbackPost(ctx, &api.AppleCallbackForm{Code: opt("code"), State: opt("state"),
			User: opt("user"), Error: opt("error")})
		require.NoError(t, err)
		loc = res.Location
	case provider == "apple":
		res, err := s.browser.AuthAppleCallbackGet(ctx, api.AuthAppleCallbackGetParams{Code: opt("code"), State: opt("state"), Error: opt("error")})
		require.NoError(t, err)
		loc = res.Location
	default:
		res, err := s.browser.AuthOidcCallback(ctx, api.AuthOidcCallbackParams{Code: opt("code"), State: opt("state"), Error: opt("error")})
		require.NoError(t, err)
		loc = res.Location
	}
	u, err := url.Parse(loc)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(loc, s.env.Config.AppURL+"/auth/"), loc)
	return u
}

// signIn runs a whole browser sign-in: begin, the person at the provider, the callback.
func (s *socialEnv) signIn(t *testing.T, provider string) browserFlow {
	t.Helper()
	start, idp := s.begin(t, provider)
	redirectURI, params := idp.Authorize(t, start.URL.String())
	require.Equal(t, s.env.Config.PublicURL+"/v1/auth/"+provider+"/callback", redirectURI)
	return browserFlow{binding: start.Binding, location: s.callback(t, provider, params, provider == "apple")}
}

func requireTokens(t *testing.T, r *api.LoginResult) {
	t.Helper()
	require.True(t, r.AccessToken.Set && r.RefreshToken.Set, "want a token pair")
	require.False(t, r.TwoFaRequired.Set)
}

func requireTwoFAChallenge(t *testing.T, r *api.LoginResult) {
	t.Helper()
	require.True(t, r.TwoFaRequired.Value)
	require.NotEmpty(t, r.PendingToken.Value)
	require.Equal(t, 300, r.ExpiresIn.Value)
	require.False(t, r.AccessToken.Set)
}

func (s *socialEnv) sessionProvider(t *testing.T, accessToken string) string {
	t.Helper()
	sessions, err := s.env.Client(t, accessToken).AuthListSessions(context.Background())
	require.NoError(t, err)
	require.Len(t, sessions, 1)
	return sessions[0].AuthProvider
}

func TestSocialConfigReportsWhatIsEnabled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("nothing configured", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		public := env.Client(t, "")
		providers, err := public.AuthListProviders(ctx)
		require.NoError(t, err)
		require.Equal(t, &api.AuthProviders{}, providers)
		cfg, err := public.AuthGetConfig(ctx)
		require.NoError(t, err)
		require.Equal(t, &api.AuthConfig{Providers: []api.AuthBrowserProvider{}, RegistrationEnabled: true,
			EmailVerificationRequired: true, PasskeysEnabled: false}, cfg, "passkeys cannot run on an IP-address app URL")

		_, err = public.AuthGoogleSignIn(ctx, &api.GoogleSignInRequest{IDToken: "x"})
		requireAPIError(t, err, 503, "provider_disabled")
		_, err = public.AuthAppleSignIn(ctx, &api.AppleSignInRequest{IdentityToken: "x"})
		requireAPIError(t, err, 503, "provider_disabled")
		_, err = public.AuthGoogleBegin(ctx)
		requireAPIError(t, err, 503, "provider_disabled")
		_, err = public.AuthAppleBegin(ctx)
		requireAPIError(t, err, 503, "provider_disabled")
		_, err = public.AuthOidcBegin(ctx)
		requireAPIError(t, err, 503, "provider_disabled")

		res, err := browserClient(t, env).AuthOidcCallback(ctx, api.AuthOidcCallbackParams{
			Code: api.NewOptString("c"), State: api.NewOptString("s")})
		require.NoError(t, err)
		require.Equal(t, env.Config.AppURL+"/auth/login?sso_error=provider_disabled", res.Location)
	})

	t.Run("everything configured", func(t *testing.T) {
		t.Parallel()
		s := newSocialEnv(t, func(c *config.Config) {
			c.Captcha, c.TurnstileSecret, c.TurnstileSiteKey = "turnstile", "secret", "site-key"
			c.RequireEmailVerification = false
			c.AppURL = "https://app.example.com"
		})
		providers, err := s.public.AuthListProviders(ctx)
		require.NoError(t, err)
		require.Equal(t, &api.AuthProviders{
			Apple:  api.AuthProviderStatus{Enabled: true, ClientID: "com.example.app"},
			Google: api.AuthProviderStatus{Enabled: true, ClientID: "google-client"},
		}, providers)
		cfg, err := s.public.AuthGetConfig(ctx)
		require.NoError(t, err)
		require.Equal(t, &api.AuthConfig{
			Providers:       []api.AuthBrowserProvider{api.AuthBrowserProviderGoogle, api.AuthBrowserProviderApple, api.AuthBrowserProviderOidc},
			OidcDisplayName: api.NewOptString("Test IdP"), RegistrationEnabled: true, EmailVerificationRequired: false,
			CaptchaRequired: true, CaptchaSiteKey: "site-key", PasskeysEnabled: true,
		}, cfg)
	})
}

func TestNativeSignInCreatesTheAccountOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSocialEnv(t)

	ada := oidctest.User{Subject: "g-ada", Email: "Ada@Example.com", EmailVerified: true, GivenName: "Ada", FamilyName: "Lovelace"}
	res, err := s.public.AuthGoogleSignIn(ctx, &api.GoogleSignInRequest{IDToken: s.google.Sign(t, s.google.ClaimsFor(ada))})
	require.NoError(t, err)
	requireTokens(t, res)
	require.Equal(t, "google", s.sessionProvider(t, res.AccessToken.Value))
	mails := s.env.Mail.To("ada@example.com")
	require.Len(t, mails, 1, "a provider-verified identity skips the email code")
	require.Contains(t, mails[0].Subject, "New sign-in", "only the new sign-in alert is sent")

	// The account, its own organization on a trial, the owner membership and the identity link.
	userID, first, last, verified := s.userByEmail(t, "ada@example.com")
	require.Equal(t, "Ada", first)
	require.Equal(t, "Lovelace", last)
	require.True(t, verified)
	var role string
	var trialEnds time.Time
	require.NoError(t, s.owner.QueryRow(ctx, `SELECT m.role, o.trial_ends_at FROM memberships m
		JOIN organizations o ON o.id = m.organization_id WHERE m.user_id = $1`, userID).Scan(&role, &trialEnds))
	require.Equal(t, "owner", role)
	require.WithinDuration(t, time.Now().Add(14*24*time.Hour), trialEnds, time.Hour)
	var linked uuid.UUID
	require.NoError(t, s.owner.QueryRow(ctx,
		"SELECT user_id FROM user_identities WHERE provider = 'google' AND subject = 'g-ada'").Scan(&linked))
	require.Equal(t, userID, linked)

	// Signing in again, even after the address changed at the provider, reaches the same account.
	ada.Email = "ada@new.example"
	res, err = s.public.AuthGoogleSignIn(ctx, &api.GoogleSignInRequest{IDToken: s.google.Sign(t, s.google.ClaimsFor(ada))})
	require.NoError(t, err)
	requireTokens(t, res)
	require.Equal(t, 1, s.userCount(t))

	// Apple: names come with the request (Apple sends them on first consent only), email_verified as a string.
	claims := s.apple.ClaimsFor(oidctest.User{Subject: "a-grace", Email: "grace@example.com"})
	claims["email_verified"] = "true"
	res, err = s.public.AuthAppleSignIn(ctx, &api.AppleSignInRequest{IdentityToken: s.apple.Sign(t, claims),
		FirstName: api.NewOptString("Grace"), LastName: api.NewOptString("Hopper")})
	require.NoError(t, err)
	requireTokens(t, res)
	require.Equal(t, "apple", s.sessionProvider(t, res.AccessToken.Value))
	_, first, last, _ = s.userByEmail(t, "grace@example.com")
	require.Equal(t, "Grace", first)
	require.Equal(t, "Hopper", last)
	// The names are used only when the account is created.
	res, err = s.public.AuthAppleSignIn(ctx, &api.AppleSignInRequest{IdentityToken: s.apple.Sign(t, claims),
		FirstName: api.NewOptString("Someone"), LastName: api.NewOptString("Else")})
	require.NoError(t, err)
	requireTokens(t, res)
	_, first, _, _ = s.userByEmail(t, "grace@example.com")
	require.Equal(t, "Grace", first)
	require.Equal(t, 2, s.userCount(t))
}

func TestNativeSignInLinksAnAccountByVerifiedEmail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSocialEnv(t)
	s.env.SignUp(t, "ada@example.com")
	passwordUser, _, _, _ := s.userByEmail(t, "ada@example.com")

	// An unverified address neither links nor creates anything.
	unverified := s.google.ClaimsFor(oidctest.User{Subject: "g-ada", Email: "ada@example.com", EmailVerified: false})
	_, err := s.public.AuthGoogleSignIn(ctx, &api.GoogleSignInRequest{IDToken: s.google.Sign(t, unverified)})
	requireAPIError(t, err, 401, "email_unverified")
	noEmail := s.google.ClaimsFor(oidctest.User{Subject: "g-nobody"})
	_, err = s.public.AuthGoogleSignIn(ctx, &api.GoogleSignInRequest{IDToken: s.google.Sign(t, noEmail)})
	requireAPIError(t, err, 401, "email_unverified")
	require.Equal(t, 1, s.userCount(t))

	res, err := s.public.AuthGoogleSignIn(ctx, &api.GoogleSignInRequest{
		IDToken: s.google.Sign(t, s.google.ClaimsFor(oidctest.User{Subject: "g-ada", Email: "ada@example.com", EmailVerified: true}))})
	require.NoError(t, err)
	requireTokens(t, res)
	require.Equal(t, 1, s.userCount(t))
	var linked uuid.UUID
	require.NoError(t, s.owner.QueryRow(ctx,
		"SELECT user_id FROM user_identities WHERE provider = 'google' AND subject = 'g-ada'").Scan(&linked))
	require.Equal(t, passwordUser, linked)
	// The password still works alongside.
	s.env.SignIn(t, "ada@example.com", apitest.Password)
}

func TestNativeSignInRefusesBadIDTokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSocialEnv(t)
	ada := oidctest.User{Subject: "g-ada", Email: "ada@example.com", EmailVerified: true}
	with := func(change func(oidctest.Claims)) string {
		c := s.google.ClaimsFor(ada)
		change(c)
		return s.google.Sign(t, c)
	}
	unsigned := func() string {
		payload, err := json.Marshal(s.google.ClaimsFor(ada))
		require.NoError(t, err)
		enc := base64.RawURLEncoding
		return enc.EncodeToString([]byte(`{"alg":"none"}`)) + "." + enc.EncodeToString(payload) + "."
	}
	for _, tc := range []struct{ name, token string }{
		{"another audience", with(func(c oidctest.Claims) { c["aud"] = "someone-else" })},
		{"another issuer", with(func(c oidctest.Claims) { c["iss"] = "https://evil.example" })},
		{"expired", with(func(c oidctest.Claims) { c["exp"] = time.Now().Add(-5 * time.Minute).Unix() })},
		{"no expiry", with(func(c oidctest.Claims) { delete(c, "exp") })},
		{"not yet valid", with(func(c oidctest.Claims) { c["nbf"] = time.Now().Add(time.Hour).Unix() })},
		{"no subject", with(func(c oidctest.Claims) { delete(c, "sub") })},
		{"several audiences, no azp", with(func(c oidctest.Claims) { c["aud"] = []string{"google-client", "other"} })},
		{"another provider's token", s.apple.Sign(t, s.apple.ClaimsFor(ada))},
		{"unpublished key", s.google.SignUnpublished(t, s.google.ClaimsFor(ada))},
		{"unsigned", unsigned()},
		{"not a JWT", "not-a-token"},
	} {
		_, err := s.public.AuthGoogleSignIn(ctx, &api.GoogleSignInRequest{IDToken: tc.token})
		requireAPIError(t, err, 401, "invalid_identity_token")
	}
	require.Equal(t, 0, s.userCount(t))

	// An Apple token for Apple's client id is what Apple sign-in accepts.
	res, err := s.public.AuthAppleSignIn(ctx, &api.AppleSignInRequest{IdentityToken: s.apple.Sign(t, s.apple.ClaimsFor(ada))})
	require.NoError(t, err)
	requireTokens(t, res)
	// Several audiences are fine when this client is the authorized party.
	res, err = s.public.AuthGoogleSignIn(ctx, &api.GoogleSignInRequest{IDToken: with(func(c oidctest.Claims) {
		c["aud"], c["azp"] = []string{"google-client", "other"}, "google-client"
	})})
	require.NoError(t, err)
	requireTokens(t, res)
	require.Equal(t, 1, s.userCount(t))

	// Missing required fields are a 400.
	_, err = s.public.AuthGoogleSignIn(ctx, &api.GoogleSignInRequest{})
	require.Error(t, err)
	resp := s.env.Do(t, http.MethodPost, "/v1/auth/google", "", strings.NewReader(`{}`), http.Header{"Content-Type": {"application/json"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
}

func TestNativeSignInAsksForTheSecondFactor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSocialEnv(t)
	token := s.google.Sign(t, s.google.ClaimsFor(oidctest.User{Subject: "g-ada", Email: "ada@example.com", EmailVerified: true}))
	res, err := s.public.AuthGoogleSignIn(ctx, &api.GoogleSignInRequest{IDToken: token})
	require.NoError(t, err)
	requireTokens(t, res)
	userID, _, _, _ := s.userByEmail(t, "ada@example.com")
	s.enableTwoFA(t, userID)

	res, err = s.public.AuthGoogleSignIn(ctx, &api.GoogleSignInRequest{IDToken: token})
	require.NoError(t, err)
	requireTwoFAChallenge(t, res)
}

func TestProviderUnreachableIs503(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSocialEnv(t)
	s.google.GoDown()
	_, err := s.public.AuthGoogleSignIn(ctx, &api.GoogleSignInRequest{IDToken: "a.b.c"})
	requireAPIError(t, err, 401, "invalid_identity_token") // not even a JWT: refused before any call
	token := s.apple.Sign(t, s.apple.ClaimsFor(oidctest.User{Subject: "x"}))
	_, err = s.public.AuthGoogleSignIn(ctx, &api.GoogleSignInRequest{IDToken: token})
	requireAPIError(t, err, 503, "provider_unavailable")
	_, err = s.public.AuthGoogleBegin(ctx)
	requireAPIError(t, err, 503, "provider_unavailable")
}

func TestSocialSignInIsRateLimitedPerSourceIP(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSocialEnv(t)
	for range 30 {
		_, err := s.public.AuthGoogleSignIn(ctx, &api.GoogleSignInRequest{IDToken: "not-a-token"})
		requireAPIError(t, err, 401, "invalid_identity_token")
	}
	_, err := s.public.AuthGoogleSignIn(ctx, &api.GoogleSignInRequest{IDToken: "not-a-token"})
	requireAPIError(t, err, 429, "rate_limited")
	// Each step has its own budget.
	_, err = s.public.AuthGoogleBegin(ctx)
	require.NoError(t, err)
}
