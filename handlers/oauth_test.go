package handlers_test

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
)

// oauthRedirect is where test apps receive the browser; nothing listens there, the browser stops short of it.
const oauthRedirect = "http://127.0.0.1:9/callback"

// oauthBrowser is a person's browser on the consent page: it keeps cookies and follows redirects within the
// server, stopping at the app's redirect URI.
type oauthBrowser struct {
	env   *apitest.Env
	http  *http.Client
	email string
}

func newOAuthBrowser(t *testing.T, env *apitest.Env, email string) *oauthBrowser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	server, _ := url.Parse(env.Server.URL)
	hc := *env.Server.Client()
	hc.Jar = jar
	hc.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		if req.URL.Host != server.Host {
			return http.ErrUseLastResponse
		}
		return nil
	}
	return &oauthBrowser{env: env, http: &hc, email: email}
}

func (b *oauthBrowser) do(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := b.http.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(body)
}

func (b *oauthBrowser) get(t *testing.T, target string) (*http.Response, string) {
	t.Helper()
	if strings.HasPrefix(target, "/") {
		target = b.env.Server.URL + target
	}
	req, err := http.NewRequest(http.MethodGet, target, nil)
	require.NoError(t, err)
	return b.do(t, req)
}

func (b *oauthBrowser) post(t *testing.T, path string, form url.Values) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.env.Server.URL+path, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(t, req)
}

var hiddenField = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`)

// hiddenFields reads the hidden inputs of a rendered page.
func hiddenFields(page string) url.Values {
	out := url.Values{}
	for _, m := range hiddenField.FindAllStringSubmatch(page, -1) {
		out.Set(m[1], html.UnescapeString(m[2]))
	}
	return out
}

var orgOption = regexp.MustCompile(`<option value="([0-9a-f-]{36})">`)

// consent opens authURL, signing in on the page first when the browser has no session, and returns the
// consent page.
func (b *oauthBrowser) consent(t *testing.T, authURL string) string {
	t.Helper()
	resp, page := b.get(t, authURL)
	require.Equal(t, http.StatusOK, resp.StatusCode, page)
	if strings.Contains(page, `name="step" value="password"`) {
		require.Equal(t, "/oauth/sign-in", resp.Request.URL.Path, "no session: the browser was sent to sign in")
		require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
		require.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"))
		form := hiddenFields(page)
		form.Set("email", b.email)
		form.Set("password", apitest.Password)
		resp, page = b.post(t, "/oauth/sign-in", form)
		require.Equal(t, http.StatusOK, resp.StatusCode, page)
		require.Contains(t, page, `name="step" value="code"`)
		form = hiddenFields(page)
		form.Set("code", b.env.Mail.LastCode(t, b.email))
		resp, page = b.post(t, "/oauth/sign-in", form)
		require.Equal(t, http.StatusOK, resp.StatusCode, page)
		require.Equal(t, "/oauth/authorize", resp.Request.URL.Path, "signed in: back to the authorization request")
	}
	require.Contains(t, page, `name="csrf_token"`, page)
	require.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	require.Contains(t, resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
	require.NotContains(t, page, "<script")
	return page
}

// decide posts the consent page's form with decision for org and returns the redirect back to the app.
func (b *oauthBrowser) decide(t *testing.T, page string, org uuid.UUID, decision string) *url.URL {
	t.Helper()
	form := hiddenFields(page)
	form.Set("organization_id", org.String())
	form.Set("decision", decision)
	resp, body := b.post(t, "/oauth/authorize", form)
	require.Equal(t, http.StatusFound, resp.StatusCode, body)
	loc, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	return loc
}

// registerPublicClient registers a public client through RFC 7591 with scope.
func registerPublicClient(t *testing.T, env *apitest.Env, scope string) *api.OAuthClientRegistration {
	t.Helper()
	reg, err := env.Client(t, "").OAuthRegisterClient(context.Background(), &api.OAuthClientRegistrationRequest{
		ClientName: api.NewOptString("Agent CLI"), RedirectUris: []string{oauthRedirect}, Scope: api.NewOptString(scope),
		TokenEndpointAuthMethod: api.NewOptOAuthClientRegistrationRequestTokenEndpointAuthMethod(api.OAuthClientRegistrationRequestTokenEndpointAuthMethodNone),
	})
	require.NoError(t, err)
	return reg
}

func oauthConfig(env *apitest.Env, clientID, secret string, scopes ...string) *oauth2.Config {
	style := oauth2.AuthStyleInParams
	if secret != "" {
		style = oauth2.AuthStyleInHeader
	}
	return &oauth2.Config{
		ClientID: clientID, ClientSecret: secret, RedirectURL: oauthRedirect, Scopes: scopes,
		Endpoint: oauth2.Endpoint{AuthURL: env.Server.URL + "/oauth/authorize", TokenURL: env.Server.URL + "/v1/oauth/token", AuthStyle: style},
	}
}

func oauthContext(env *apitest.Env) context.Context {
	return context.WithValue(context.Background(), oauth2.HTTPClient, env.Server.Client())
}

// requireOAuthError checks err is the token endpoint refusing with code.
func requireOAuthError(t *testing.T, err error, code string) {
	t.Helper()
	var re *oauth2.RetrieveError
	require.ErrorAs(t, err, &re)
	require.Equal(t, code, re.ErrorCode, string(re.Body))
	var body map[string]any
	require.NoError(t, json.Unmarshal(re.Body, &body))
	require.Equal(t, code, body["code"])
	require.NotEmpty(t, body["error_description"])
	require.NotEmpty(t, body["request_id"])
	require.Equal(t, "no-store", re.Response.Header.Get("Cache-Control"))
}

// requireUnauthorized checks token no longer authenticates.
func requireUnauthorized(t *testing.T, env *apitest.Env, token string) {
	t.Helper()
	_, err := env.Client(t, token).AnalyticsAuditLogsList(context.Background(), api.AnalyticsAuditLogsListParams{})
	var se *api.ErrorStatusCode
	require.ErrorAs(t, err, &se)
	require.Equal(t, http.StatusUnauthorized, se.StatusCode, se.Response.Message)
}

func homeOrganization(t *testing.T, env *apitest.Env, pair *api.TokenPair) uuid.UUID {
	t.Helper()
	cur, err := env.Client(t, pair.AccessToken).OrganizationsGetCurrent(context.Background())
	require.NoError(t, err)
	return cur.ID
}

// TestOAuthFullFlowWithStandardClient runs the whole flow with golang.org/x/oauth2: dynamic registration,
// authorization with PKCE on the consent page, token, API call, refresh, reuse of the old refresh token
// revoking the grant, and revocation.
func TestOAuthFullFlowWithStandardClient(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := oauthContext(env)
	pair := env.SignUp(t, "owner@oauth.example")
	org := homeOrganization(t, env, pair)

	reg := registerPublicClient(t, env, "read_audit_logs read_contacts")
	require.Equal(t, api.OAuthClientRegistrationTokenEndpointAuthMethodNone, reg.TokenEndpointAuthMethod)
	require.False(t, reg.ClientSecret.Set, "a public client gets no secret")
	require.Equal(t, "read_contacts read_audit_logs", reg.Scope)
	require.Equal(t, []api.OAuthClientRegistrationGrantTypesItem{"authorization_code", "refresh_token"}, reg.GrantTypes)

	conf := oauthConfig(env, reg.ClientID, "", "read_audit_logs", "read_contacts")
	verifier := oauth2.GenerateVerifier()
	browser := newOAuthBrowser(t, env, "owner@oauth.example")
	page := browser.consent(t, conf.AuthCodeURL("state-123", oauth2.S256ChallengeOption(verifier)))
	require.Contains(t, page, "Authorize Agent CLI")
	require.Contains(t, page, "<code>read_audit_logs</code>")
	require.Contains(t, page, "registered itself")
	require.Regexp(t, orgOption, page, "the owner's organization is offered")
	require.Equal(t, org.String(), orgOption.FindStringSubmatch(page)[1])

	// A decision without the page's CSRF token, or without the sign-in cookie, is refused.
	forged := hiddenFields(page)
	forged.Set("csrf_token", "forged")
	forged.Set("organization_id", org.String())
	forged.Set("decision", "approve")
	resp, body := browser.post(t, "/oauth/authorize", forged)
	require.Equal(t, http.StatusForbidden, resp.StatusCode, body)
	forged = hiddenFields(page)
	forged.Set("organization_id", org.String())
	forged.Set("decision", "approve")
	anon := newOAuthBrowser(t, env, "")
	resp, body = anon.post(t, "/oauth/authorize", forged)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, body)

	back := browser.decide(t, page, org, "approve")
	require.Equal(t, "127.0.0.1:9", back.Host)
	require.Equal(t, "state-123", back.Query().Get("state"))
	code := back.Query().Get("code")
	require.True(t, strings.HasPrefix(code, "ory_ac_"), back.String())

	tok, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(tok.AccessToken, "ory_at_"))
	require.NotEmpty(t, tok.RefreshToken)
	require.Equal(t, "Bearer", tok.TokenType)
	require.Equal(t, "read_contacts read_audit_logs", tok.Extra("scope"))
	require.InDelta(t, 3600, tok.Extra("expires_in"), 5)

	// The token acts like an API key of the organization with the granted scopes.
	api1 := env.Client(t, tok.AccessToken)
	logs, err := api1.AnalyticsAuditLogsList(context.Background(), api.AnalyticsAuditLogsListParams{})
	require.NoError(t, err)
	require.NotEmpty(t, logs.Data)
	require.Equal(t, "oauth_grant.created", auditEvent(logs.Data[0]))
	_, err = api1.APIKeysList(context.Background(), api.APIKeysListParams{})
	var se *api.ErrorStatusCode
	require.ErrorAs(t, err, &se)
	require.Equal(t, http.StatusForbidden, se.StatusCode, "a scope the grant lacks is refused")
	require.Equal(t, "missing_scope", se.Response.Code)

	// Refresh rotates: a new refresh token and access token; the old access token stops working.
	refreshed, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	require.NoError(t, err)
	require.NotEqual(t, tok.RefreshToken, refreshed.RefreshToken)
	require.NotEqual(t, tok.AccessToken, refreshed.AccessToken)
	requireUnauthorized(t, env, tok.AccessToken)
	_, err = env.Client(t, refreshed.AccessToken).AnalyticsAuditLogsList(context.Background(), api.AnalyticsAuditLogsListParams{})
	require.NoError(t, err)

	// Reusing the rotated refresh token is refused and revokes the grant: the new tokens stop working too.
	_, err = conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	requireOAuthError(t, err, "invalid_grant")
	requireUnauthorized(t, env, refreshed.AccessToken)
	_, err = conf.TokenSource(ctx, &oauth2.Token{RefreshToken: refreshed.RefreshToken}).Token()
	requireOAuthError(t, err, "invalid_grant")

	// A new approval (the browser is still signed in) makes a new grant; revoking its access token revokes it.
	verifier = oauth2.GenerateVerifier()
	page = browser.consent(t, conf.AuthCodeURL("state-456", oauth2.S256ChallengeOption(verifier)))
	back = browser.decide(t, page, org, "approve")
	tok, err = conf.Exchange(ctx, back.Query().Get("code"), oauth2.VerifierOption(verifier))
	require.NoError(t, err)
	public := env.Client(t, "")
	require.NoError(t, public.OAuthRevokeToken(context.Background(), &api.OAuthRevokeRequest{
		Token: tok.AccessToken, ClientID: api.NewOptString(reg.ClientID),
		TokenTypeHint: api.NewOptOAuthRevokeRequestTokenTypeHint(api.OAuthRevokeRequestTokenTypeHintAccessToken)}))
	requireUnauthorized(t, env, tok.AccessToken)
	_, err = conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	requireOAuthError(t, err, "invalid_grant")
	// Revoking again, or an unknown token, is answered 200 as well.
	require.NoError(t, public.OAuthRevokeToken(context.Background(), &api.OAuthRevokeRequest{Token: tok.RefreshToken, ClientID: api.NewOptString(reg.ClientID)}))
	require.NoError(t, public.OAuthRevokeToken(context.Background(), &api.OAuthRevokeRequest{Token: "ory_rt_unknown.token", ClientID: api.NewOptString(reg.ClientID)}))

	// Denying sends the browser back with access_denied.
	page = browser.consent(t, conf.AuthCodeURL("state-789", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	back = browser.decide(t, page, org, "deny")
	require.Equal(t, "access_denied", back.Query().Get("error"))
	require.Equal(t, "state-789", back.Query().Get("state"))

	require.Equal(t, []string{"oauth_grant.created", "oauth_grant.revoked", "oauth_grant.created", "oauth_grant.revoked"},
		oauthAuditActions(t, env, org))
}

// oauthAuditActions lists the OAuth audit actions of org, oldest first.
func oauthAuditActions(t *testing.T, env *apitest.Env, org uuid.UUID) []string {
	t.Helper()
	var out []string
	for _, a := range orgAuditActions(t, env, org) {
		if strings.HasPrefix(a, "oauth_") {
			out = append(out, a)
		}
	}
	return out
}

// noFollow is a client that shows redirects instead of following them.
func noFollow(env *apitest.Env) *http.Client {
	hc := *env.Server.Client()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &hc
}

func authorizeStatus(t *testing.T, env *apitest.Env, q url.Values) (int, *url.URL) {
	t.Helper()
	resp, err := noFollow(env).Get(env.Server.URL + "/oauth/authorize?" + q.Encode())
	require.NoError(t, err)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		return resp.StatusCode, nil
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	return resp.StatusCode, loc
}

// TestOAuthAuthorizeRefusals pins the validation order of the authorization endpoint: what cannot be trusted
// as a redirect target is answered 400, everything else goes back to the app with error and state.
func TestOAuthAuthorizeRefusals(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	reg := registerPublicClient(t, env, "read_contacts")
	challenge := oauth2.S256ChallengeFromVerifier(oauth2.GenerateVerifier())
	base := func() url.Values {
		return url.Values{"response_type": {"code"}, "client_id": {reg.ClientID}, "redirect_uri": {oauthRedirect},
			"scope": {"read_contacts"}, "state": {"s1"}, "code_challenge": {challenge}, "code_challenge_method": {"S256"}}
	}

	status, loc := authorizeStatus(t, env, base())
	require.Equal(t, http.StatusFound, status)
	require.Equal(t, "/oauth/sign-in", loc.Path, "a valid request without a session goes to sign in: %s", loc)

	for name, edit := range map[string]func(url.Values){
		"unknown client":            func(q url.Values) { q.Set("client_id", "ofc_unknown") },
		"redirect_uri mismatch":     func(q url.Values) { q.Set("redirect_uri", "https://evil.example/callback") },
		"loopback on another port":  func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1:10/callback") },
		"redirect_uri with a slash": func(q url.Values) { q.Set("redirect_uri", oauthRedirect+"/") },
	} {
		q := base()
		edit(q)
		status, _ := authorizeStatus(t, env, q)
		require.Equal(t, http.StatusBadRequest, status, "%s: answered by the server, never redirected", name)
	}

	for name, tc := range map[string]struct {
		edit func(url.Values)
		code string
	}{
		"plain PKCE":                     {func(q url.Values) { q.Set("code_challenge_method", "plain") }, "invalid_request"},
		"challenge without method":       {func(q url.Values) { q.Del("code_challenge_method") }, "invalid_request"},
		"method without challenge":       {func(q url.Values) { q.Del("code_challenge") }, "invalid_request"},
		"public client without PKCE":     {func(q url.Values) { q.Del("code_challenge"); q.Del("code_challenge_method") }, "invalid_request"},
		"short challenge":                {func(q url.Values) { q.Set("code_challenge", "abc") }, "invalid_request"},
		"implicit flow":                  {func(q url.Values) { q.Set("response_type", "token") }, "unsupported_response_type"},
		"scope not registered":           {func(q url.Values) { q.Set("scope", "read_contacts write_contacts") }, "invalid_scope"},
		"send_campaigns self-registered": {func(q url.Values) { q.Set("scope", "send_campaigns") }, "invalid_scope"},
		"unknown scope":                  {func(q url.Values) { q.Set("scope", "read_everything") }, "invalid_scope"},
	} {
		q := base()
		tc.edit(q)
		status, loc := authorizeStatus(t, env, q)
		require.Equal(t, http.StatusFound, status, name)
		require.Equal(t, "127.0.0.1:9", loc.Host, name)
		require.Equal(t, tc.code, loc.Query().Get("error"), name)
		require.Equal(t, "s1", loc.Query().Get("state"), name)
		require.NotEmpty(t, loc.Query().Get("error_description"), name)
	}
}

// TestOAuthCodeRules covers the token endpoint's checks on a code: PKCE verification, the redirect URI, and a
// replayed code revoking what it was exchanged for.
func TestOAuthCodeRules(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := oauthContext(env)
	pair := env.SignUp(t, "codes@oauth.example")
	org := homeOrganization(t, env, pair)
	reg := registerPublicClient(t, env, "read_audit_logs")
	conf := oauthConfig(env, reg.ClientID, "", "read_audit_logs")
	browser := newOAuthBrowser(t, env, "codes@oauth.example")
	approve := func(verifier string) string {
		page := browser.consent(t, conf.AuthCodeURL("state-code", oauth2.S256ChallengeOption(verifier)))
		return browser.decide(t, page, org, "approve").Query().Get("code")
	}

	// No verifier, then a wrong one: refused, and the wrong verifier burns the code's PKCE session.
	verifier := oauth2.GenerateVerifier()
	code := approve(verifier)
	_, err := conf.Exchange(ctx, code)
	requireOAuthError(t, err, "invalid_grant")
	_, err = conf.Exchange(ctx, code, oauth2.VerifierOption(oauth2.GenerateVerifier()))
	requireOAuthError(t, err, "invalid_grant")
	_, err = conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	requireOAuthError(t, err, "invalid_grant")

	// The redirect URI must repeat the authorization request's.
	verifier = oauth2.GenerateVerifier()
	code = approve(verifier)
	other := *conf
	other.RedirectURL = "http://127.0.0.1:9/other"
	_, err = other.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	requireOAuthError(t, err, "invalid_grant")

	// A code works once; replaying it is refused and revokes the tokens it was exchanged for.
	verifier = oauth2.GenerateVerifier()
	code = approve(verifier)
	tok, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	require.NoError(t, err)
	_, err = conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	requireOAuthError(t, err, "invalid_grant")
	requireUnauthorized(t, env, tok.AccessToken)

	// Two concurrent redemptions of one code: at most one gets tokens, the other a 400, never a 500.
	verifier = oauth2.GenerateVerifier()
	code = approve(verifier)
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
			errs <- err
		}()
	}
	succeeded := 0
	for range 2 {
		if err := <-errs; err == nil {
			succeeded++
		} else {
			requireOAuthError(t, err, "invalid_grant")
		}
	}
	require.LessOrEqual(t, succeeded, 1)

	// A token whose key part is not the one minted is refused even with a real signature; an expired access
	// token is refused while its refresh token still works.
	verifier = oauth2.GenerateVerifier()
	tok, err = conf.Exchange(ctx, approve(verifier), oauth2.VerifierOption(verifier))
	require.NoError(t, err)
	_, sig, ok := strings.Cut(tok.AccessToken, ".")
	require.True(t, ok)
	requireUnauthorized(t, env, "ory_at_"+strings.Repeat("A", 43)+"."+sig)
	_, err = env.DB.OwnerPool(t).Exec(context.Background(), `UPDATE oauth_tokens SET expires_at = now() - interval '1 second',
		request = jsonb_set(request, '{session,expires_at,access_token}', to_jsonb(now() - interval '1 second'))
		WHERE kind = 'access_token' AND signature = $1`, sig)
	require.NoError(t, err)
	requireUnauthorized(t, env, tok.AccessToken)
	refreshed, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	require.NoError(t, err)
	_, err = env.Client(t, refreshed.AccessToken).AnalyticsAuditLogsList(context.Background(), api.AnalyticsAuditLogsListParams{})
	require.NoError(t, err)

	// Unknown grant types and unknown clients are answered in RFC terms.
	resp := env.Do(t, http.MethodPost, "/v1/oauth/token", "", strings.NewReader("grant_type=password&username=a&password=b"),
		http.Header{"Content-Type": {"application/x-www-form-urlencoded"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	require.Equal(t, "unsupported_grant_type", body["error"])
	bad := oauthConfig(env, "ofc_unknown", "secret")
	_, err = bad.Exchange(ctx, "ory_ac_x.y", oauth2.VerifierOption(verifier))
	var re *oauth2.RetrieveError
	require.ErrorAs(t, err, &re)
	require.Equal(t, "invalid_client", re.ErrorCode)
	require.Equal(t, http.StatusUnauthorized, re.Response.StatusCode)
	require.Contains(t, re.Response.Header.Get("WWW-Authenticate"), "Basic")
}

// TestOAuthRegistrationRules covers RFC 7591 registration: what a self-registered client may never hold,
// redirect URI rules, confidential clients, and the per-address limit.
func TestOAuthRegistrationRules(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	public := env.Client(t, "")
	register := func(req *api.OAuthClientRegistrationRequest) (*api.OAuthClientRegistration, *api.ErrorStatusCode) {
		t.Helper()
		reg, err := public.OAuthRegisterClient(ctx, req)
		var se *api.ErrorStatusCode
		if errors.As(err, &se) {
			return nil, se
		}
		require.NoError(t, err)
		return reg, nil
	}
	for _, scope := range []string{"send_campaigns", "api_keys", "read_contacts api_keys", "read_everything", "READ_CONTACTS"} {
		_, se := register(&api.OAuthClientRegistrationRequest{RedirectUris: []string{oauthRedirect}, Scope: api.NewOptString(scope)})
		require.NotNil(t, se, scope)
		require.Equal(t, http.StatusBadRequest, se.StatusCode, scope)
		require.Equal(t, "invalid_client_metadata", se.Response.Error, scope)
	}
	for _, uri := range []string{"http://app.example.com/cb", "https://app.example.com/cb#x", "javascript:alert(1)", "relative/cb"} {
		_, se := register(&api.OAuthClientRegistrationRequest{RedirectUris: []string{uri}})
		require.NotNil(t, se, uri)
		require.Equal(t, "invalid_redirect_uri", se.Response.Error, uri)
	}

	// Omitted scope: everything a self-registered client may hold, never send_campaigns or api_keys.
	reg, se := register(&api.OAuthClientRegistrationRequest{RedirectUris: []string{"com.example.agent:/callback", oauthRedirect}})
	require.Nil(t, se)
	require.NotContains(t, strings.Fields(reg.Scope), "send_campaigns")
	require.NotContains(t, strings.Fields(reg.Scope), "api_keys")
	require.Len(t, strings.Fields(reg.Scope), 23)
	require.Equal(t, "Unnamed app", reg.ClientName.Value)

	// A confidential client receives its secret once; the client authenticates with it at the token endpoint.
	reg, se = register(&api.OAuthClientRegistrationRequest{ClientName: api.NewOptString("Server app"), RedirectUris: []string{oauthRedirect},
		TokenEndpointAuthMethod: api.NewOptOAuthClientRegistrationRequestTokenEndpointAuthMethod(api.OAuthClientRegistrationRequestTokenEndpointAuthMethodClientSecretPost)})
	require.Nil(t, se)
	require.True(t, strings.HasPrefix(reg.ClientSecret.Value, "ofcs_"))
	require.Equal(t, int64(0), reg.ClientSecretExpiresAt.Value)

	// The source address may register 20 clients an hour; 4 of its registrations above succeeded or failed
	// after the limit counted them, so the limit is reached within the next ones.
	var limited *api.ErrorStatusCode
	for i := 0; i < 20 && limited == nil; i++ {
		_, limited = register(&api.OAuthClientRegistrationRequest{RedirectUris: []string{oauthRedirect}})
	}
	require.NotNil(t, limited)
	require.Equal(t, http.StatusTooManyRequests, limited.StatusCode)
}

// TestOAuthDiscoveryDocuments pins the two discovery documents and the MCP endpoint's pointer to them.
func TestOAuthDiscoveryDocuments(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	public := env.Client(t, "")
	base := env.Config.PublicURL

	as, err := public.OAuthGetAuthorizationServerMetadata(ctx)
	require.NoError(t, err)
	require.Equal(t, base, as.Issuer.String())
	require.Equal(t, base+"/oauth/authorize", as.AuthorizationEndpoint.String())
	require.Equal(t, base+"/v1/oauth/token", as.TokenEndpoint.String())
	require.Equal(t, base+"/v1/oauth/register", as.RegistrationEndpoint.String())
	require.Equal(t, base+"/v1/oauth/revoke", as.RevocationEndpoint.String())
	// What a client registering itself can be granted: asking for more would fail its registration.
	require.Len(t, as.ScopesSupported, 23)
	require.Contains(t, as.ScopesSupported, api.OAuthScope("send_direct_email"))
	require.NotContains(t, as.ScopesSupported, api.OAuthScope("send_campaigns"))
	require.NotContains(t, as.ScopesSupported, api.OAuthScope("api_keys"))
	require.Equal(t, []api.OAuthAuthorizationServerMetadataResponseTypesSupportedItem{"code"}, as.ResponseTypesSupported)
	require.Equal(t, []api.OAuthAuthorizationServerMetadataGrantTypesSupportedItem{"authorization_code", "refresh_token"}, as.GrantTypesSupported)
	require.Equal(t, []api.OAuthAuthorizationServerMetadataCodeChallengeMethodsSupportedItem{"S256"}, as.CodeChallengeMethodsSupported)
	require.Equal(t, []api.OAuthAuthorizationServerMetadataTokenEndpointAuthMethodsSupportedItem{"none", "client_secret_basic", "client_secret_post"},
		as.TokenEndpointAuthMethodsSupported)

	// Served at the deployment root, outside /v1.
	resp := env.Do(t, http.MethodGet, "/.well-known/oauth-authorization-server", "", nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)

	pr, err := public.OAuthGetProtectedResourceMetadata(ctx)
	require.NoError(t, err)
	require.Equal(t, base+"/v1/mcp", pr.Resource.String())
	require.Len(t, pr.AuthorizationServers, 1)
	require.Equal(t, base, pr.AuthorizationServers[0].String())
	require.Equal(t, []api.OAuthProtectedResourceMetadataBearerMethodsSupportedItem{"header"}, pr.BearerMethodsSupported)
	require.Equal(t, as.ScopesSupported, pr.ScopesSupported)
	resp = env.Do(t, http.MethodGet, "/.well-known/oauth-protected-resource", "", nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)

	// RFC 9728's path-suffixed address of the resource <root>/v1/mcp serves the same document.
	suffixed, err := public.OAuthGetProtectedResourceMetadataMcp(ctx)
	require.NoError(t, err)
	require.Equal(t, pr, suffixed)
	resp = env.Do(t, http.MethodGet, "/.well-known/oauth-protected-resource/v1/mcp", "", nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)

	resp = env.Do(t, http.MethodPost, "/v1/mcp", "", strings.NewReader(`{}`), http.Header{"Content-Type": {"application/json"}})
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Contains(t, resp.Header.Get("WWW-Authenticate"), `resource_metadata="`+base+`/.well-known/oauth-protected-resource/v1/mcp"`)
}
