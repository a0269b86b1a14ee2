package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/pagination"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/internal/trail/audit"
	"github.com/outflowhq/outflow/oauth"
)

// OAuth implements the OAuth 2.1 authorization server's operations: the discovery documents, dynamic
// registration, the token and revocation endpoints, the consent page (with its own sign-in, since browsers
// send no bearer token) and the management of an organization's OAuth applications. The protocol itself lives
// in package oauth; these methods map requests onto it.
type OAuth struct {
	provider     *oauth.Provider
	pool         *pgxpool.Pool
	authn        *auth.Authenticator
	flows        *accounts.Flows
	twoFactor    *accounts.TwoFactor
	keyring      *seal.Keyring
	limiter      *auth.Limiter
	cursors      *pagination.Cursors
	queries      *dbq.Queries
	logger       *slog.Logger
	secureCookie bool
	// webhooks challenges the managed endpoint an approval creates (set by New; nil sends none).
	webhooks *Webhooks
}

// OAuthDeps is what the OAuth operations are built from.
type OAuthDeps struct {
	Provider *oauth.Provider
	Pool     *pgxpool.Pool
	// Authenticator verifies the consent page's session cookie.
	Authenticator *auth.Authenticator
	// Flows and TwoFactor run the consent page's sign-in.
	Flows     *accounts.Flows
	TwoFactor *accounts.TwoFactor
	// Keyring seals app webhook secrets.
	Keyring *seal.Keyring
	// Secret signs list cursors.
	Secret []byte
	// PublicURL decides whether the consent cookie is Secure (an https deployment).
	PublicURL string
	Logger    *slog.Logger
}

// NewOAuth builds the OAuth operations.
func NewOAuth(d OAuthDeps) *OAuth {
	return &OAuth{
		provider: d.Provider, pool: d.Pool, authn: d.Authenticator, flows: d.Flows, twoFactor: d.TwoFactor,
		keyring: d.Keyring, limiter: auth.NewLimiter(d.Pool), cursors: pagination.NewCursors(d.Secret),
		queries: dbq.New(), logger: d.Logger, secureCookie: strings.HasPrefix(d.PublicURL, "https://"),
	}
}

// --- the HTTP layer

// Paths the OAuth layer serves or decorates.
const (
	consentPath = "/oauth/authorize"
	signInPath  = "/oauth/sign-in"
	// consentCookie holds the consent page's sign-in: the person's session access token, sent only to /oauth.
	consentCookie = "outflow_oauth_session"
)

// protocolPaths are the OAuth protocol endpoints (under /v1) and the RFC error code a request the API could
// not even decode gets there.
var protocolPaths = map[string]string{
	"/v1/oauth/token":    "invalid_request",
	"/v1/oauth/revoke":   "invalid_request",
	"/v1/oauth/register": "invalid_client_metadata",
}

// rfcErrorCodes are the error codes of RFC 6749 §5.2, RFC 7009 and RFC 7591 the protocol endpoints answer with.
var rfcErrorCodes = map[string]bool{
	"invalid_request": true, "invalid_client": true, "invalid_grant": true, "unauthorized_client": true,
	"unsupported_grant_type": true, "invalid_scope": true, "unsupported_token_type": true,
	"invalid_redirect_uri": true, "invalid_client_metadata": true,
}

type rawRequestKey struct{}

// rawRequest is what the OAuth operations need from the HTTP request that their typed, decoded forms do not
// carry: the Authorization header (client_secret_basic) and the consent page's session cookie.
type rawRequest struct {
	authorization string
	session       string
}

func rawFrom(ctx context.Context) rawRequest {
	r, _ := ctx.Value(rawRequestKey{}).(rawRequest)
	return r
}

// HTTP is the OAuth endpoints' own layer of the request path, inside the request id, recovery and body limit
// middlewares.
//
// ogen hands each operation a typed, validated form, while fosite reads an *http.Request and the consent page
// needs a cookie. Instead of smuggling the raw request into the handlers, this layer puts exactly the two facts
// the operations need in the context (the Authorization header and the consent cookie); the token and
// revocation handlers then rebuild the form POST fosite reads from the typed fields (oauth.Provider.Token), so
// fosite sees only what the contract declares.
//
// It also serves the consent flow's sign-in page (an HTML form, not an API operation), sets the pages'
// security headers (no framing, no caching, no scripts), and gives the protocol endpoints' answers their RFC
// shape: `Cache-Control: no-store`, `error_description` beside the envelope's members, an RFC error code for
// requests the API could not decode, and `WWW-Authenticate: Basic` when HTTP Basic client authentication failed.
func (h *OAuth) HTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		var pw *protocolWriter
		switch {
		case path == signInPath:
			pageHeaders(w.Header())
			h.signIn(w, r)
			return
		case path == consentPath || path == "/v1"+consentPath:
			pageHeaders(w.Header())
		case protocolPaths[path] != "":
			w.Header().Set("Cache-Control", "no-store")
			w.Header().Set("Pragma", "no-cache")
			_, _, basic := r.BasicAuth()
			pw = &protocolWriter{ResponseWriter: w, basic: basic, fallback: protocolPaths[path]}
			w = pw
		default:
			next.ServeHTTP(w, r)
			return
		}
		raw := rawRequest{authorization: r.Header.Get("Authorization")}
		if c, err := r.Cookie(consentCookie); err == nil {
			raw.session = c.Value
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), rawRequestKey{}, raw)))
		if pw != nil {
			pw.finish()
		}
	})
}

// pageHeaders are the consent flow pages' headers: never cached, never framed (consent must not be
// clickjacked), no script and nothing loaded but inline style and https images.
func pageHeaders(h http.Header) {
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
}

// protocolWriter holds back an error answer of a protocol endpoint to give it its RFC shape.
type protocolWriter struct {
	http.ResponseWriter
	basic     bool
	fallback  string
	status    int
	buffering bool
	buf       bytes.Buffer
}

func (w *protocolWriter) WriteHeader(code int) {
	if code >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		w.status, w.buffering = code, true
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *protocolWriter) Write(b []byte) (int, error) {
	if w.buffering {
		return w.buf.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *protocolWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes a held-back error: the envelope plus error_description (its message), with an RFC error code
// for a request the API refused before the handler ran.
func (w *protocolWriter) finish() {
	if !w.buffering {
		return
	}
	body := w.buf.Bytes()
	var m map[string]any
	if json.Unmarshal(body, &m) == nil {
		if code, _ := m["error"].(string); w.status == http.StatusBadRequest && !rfcErrorCodes[code] {
			m["error"], m["code"] = w.fallback, w.fallback
		}
		if _, ok := m["error_description"]; !ok {
			m["error_description"] = m["message"]
		}
		if b, err := json.Marshal(m); err == nil {
			body = append(b, '\n')
		}
	}
	if w.status == http.StatusUnauthorized && w.basic {
		w.Header().Set("WWW-Authenticate", `Basic realm="outflow", charset="UTF-8"`)
	}
	w.Header().Del("Content-Length")
	w.ResponseWriter.WriteHeader(w.status)
	_, _ = w.ResponseWriter.Write(body)
}

// protocolFailure answers an *oauth.Error in the RFC's terms (the envelope's error and code are the RFC code);
// anything else goes through the usual error mapping.
func (h *OAuth) protocolFailure(ctx context.Context, err error) error {
	var pe *oauth.Error
	if !errors.As(err, &pe) {
		return err
	}
	apierror.Log(ctx, h.logger, apierror.New(pe.Status, pe.Code, pe.Description).WithCause(pe.Unwrap()))
	return &api.ErrorStatusCode{StatusCode: pe.Status, Response: api.Error{
		Error: pe.Code, Message: pe.Description, Code: pe.Code, RequestID: reqctx.ID(ctx)}}
}

// --- discovery

// allScopes lists every scope an app can be registered with.
func allScopes() []api.OAuthScope {
	names := oauth.ScopeNames(auth.FullAccess)
	out := make([]api.OAuthScope, len(names))
	for i, n := range names {
		out[i] = api.OAuthScope(n)
	}
	return out
}

func mustURL(raw string) url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		return url.URL{}
	}
	return *u
}

// OAuthGetAuthorizationServerMetadata answers the RFC 8414 discovery document.
func (h *OAuth) OAuthGetAuthorizationServerMetadata(ctx context.Context) (*api.OAuthAuthorizationServerMetadata, error) {
	p := h.provider
	return &api.OAuthAuthorizationServerMetadata{
		Issuer:                mustURL(p.Issuer()),
		AuthorizationEndpoint: mustURL(p.AuthorizationEndpoint()),
		TokenEndpoint:         mustURL(p.TokenEndpoint()),
		RegistrationEndpoint:  mustURL(p.RegistrationEndpoint()),
		RevocationEndpoint:    mustURL(p.RevocationEndpoint()),
		ScopesSupported:       allScopes(),
		ResponseTypesSupported: []api.OAuthAuthorizationServerMetadataResponseTypesSupportedItem{
			api.OAuthAuthorizationServerMetadataResponseTypesSupportedItemCode},
		GrantTypesSupported: []api.OAuthAuthorizationServerMetadataGrantTypesSupportedItem{
			api.OAuthAuthorizationServerMetadataGrantTypesSupportedItemAuthorizationCode,
			api.OAuthAuthorizationServerMetadataGrantTypesSupportedItemRefreshToken},
		CodeChallengeMethodsSupported: []api.OAuthAuthorizationServerMetadataCodeChallengeMethodsSupportedItem{
			api.OAuthAuthorizationServerMetadataCodeChallengeMethodsSupportedItemS256},
		TokenEndpointAuthMethodsSupported: []api.OAuthAuthorizationServerMetadataTokenEndpointAuthMethodsSupportedItem{
			api.OAuthAuthorizationServerMetadataTokenEndpointAuthMethodsSupportedItemNone,
			api.OAuthAuthorizationServerMetadataTokenEndpointAuthMethodsSupportedItemClientSecretBasic,
			api.OAuthAuthorizationServerMetadataTokenEndpointAuthMethodsSupportedItemClientSecretPost},
		RevocationEndpointAuthMethodsSupported: []api.OAuthAuthorizationServerMetadataRevocationEndpointAuthMethodsSupportedItem{
			api.OAuthAuthorizationServerMetadataRevocationEndpointAuthMethodsSupportedItemNone,
			api.OAuthAuthorizationServerMetadataRevocationEndpointAuthMethodsSupportedItemClientSecretBasic,
			api.OAuthAuthorizationServerMetadataRevocationEndpointAuthMethodsSupportedItemClientSecretPost},
	}, nil
}

// OAuthGetProtectedResourceMetadata answers the RFC 9728 document of the MCP endpoint.
func (h *OAuth) OAuthGetProtectedResourceMetadata(ctx context.Context) (*api.OAuthProtectedResourceMetadata, error) {
	p := h.provider
	return &api.OAuthProtectedResourceMetadata{
		Resource:             mustURL(p.MCPResource()),
		AuthorizationServers: []url.URL{mustURL(p.Issuer())},
		ScopesSupported:      allScopes(),
		BearerMethodsSupported: []api.OAuthProtectedResourceMetadataBearerMethodsSupportedItem{
			api.OAuthProtectedResourceMetadataBearerMethodsSupportedItemHeader},
		ResourceName: api.NewOptString("Outflow MCP"),
	}, nil
}

// --- dynamic registration, token, revocation

// OAuthRegisterClient registers a client dynamically (RFC 7591).
func (h *OAuth) OAuthRegisterClient(ctx context.Context, req *api.OAuthClientRegistrationRequest) (*api.OAuthClientRegistration, error) {
	in := oauth.Registration{
		ClientName: req.ClientName.Value, RedirectURIs: req.RedirectUris, Contacts: req.Contacts,
		TokenEndpointAuthMethod: string(req.TokenEndpointAuthMethod.Value),
		SoftwareID:              req.SoftwareID.Value, SoftwareVersion: req.SoftwareVersion.Value,
	}
	for _, g := range req.GrantTypes {
		in.GrantTypes = append(in.GrantTypes, string(g))
	}
	for _, rt := range req.ResponseTypes {
		in.ResponseTypes = append(in.ResponseTypes, string(rt))
	}
	if s, ok := req.Scope.Get(); ok {
		in.Scope = &s
	}
	optURI := func(o api.OptURI) string {
		if u, ok := o.Get(); ok {
			return u.String()
		}
		return ""
	}
	in.LogoURI, in.ClientURI, in.PolicyURI, in.TosURI = optURI(req.LogoURI), optURI(req.ClientURI), optURI(req.PolicyURI), optURI(req.TosURI)

	reg, err := h.provider.Register(ctx, in)
	if err != nil {
		return nil, h.protocolFailure(ctx, err)
	}
	c := reg.Client
	out := &api.OAuthClientRegistration{
		ClientID: c.ClientID, ClientIDIssuedAt: c.CreatedAt.Unix(), ClientName: api.NewOptString(c.Name),
		RedirectUris: c.RedirectUris, TokenEndpointAuthMethod: api.OAuthClientRegistrationTokenEndpointAuthMethod(c.TokenEndpointAuthMethod),
		ResponseTypes: []api.OAuthClientRegistrationResponseTypesItem{api.OAuthClientRegistrationResponseTypesItemCode},
		Scope:         oauth.ScopeString(c.AllowedScopes()), Contacts: c.Contacts,
	}
	for _, g := range c.GrantTypes {
		out.GrantTypes = append(out.GrantTypes, api.OAuthClientRegistrationGrantTypesItem(g))
	}
	if reg.Secret != "" {
		out.ClientSecret = api.NewOptString(reg.Secret)
		out.ClientSecretExpiresAt = api.NewOptInt64(0)
	}
	for _, f := range []struct {
		v   string
		dst *api.OptURI
	}{{c.Logo, &out.LogoURI}, {c.Website, &out.ClientURI}, {c.PolicyUri, &out.PolicyURI}, {c.TosUri, &out.TosURI}} {
		if f.v != "" {
			*f.dst = api.NewOptURI(mustURL(f.v))
		}
	}
	if c.SoftwareID != "" {
		out.SoftwareID = api.NewOptString(c.SoftwareID)
	}
	if c.SoftwareVersion != "" {
		out.SoftwareVersion = api.NewOptString(c.SoftwareVersion)
	}
	return out, nil
}

// formOf collects the present fields of a typed form into the url.Values fosite reads.
func formOf(fields map[string]api.OptString) url.Values {
	form := url.Values{}
	for k, v := range fields {
		if s, ok := v.Get(); ok {
			form.Set(k, s)
		}
	}
	return form
}

// OAuthIssueToken serves the token endpoint.
func (h *OAuth) OAuthIssueToken(ctx context.Context, req *api.OAuthTokenRequest) (*api.OAuthTokenResponseHeaders, error) {
	form := formOf(map[string]api.OptString{
		"code": req.Code, "redirect_uri": req.RedirectURI, "code_verifier": req.CodeVerifier,
		"client_id": req.ClientID, "client_secret": req.ClientSecret, "refresh_token": req.RefreshToken,
	})
	form.Set("grant_type", req.GrantType)
	res, err := h.provider.Token(ctx, form, rawFrom(ctx).authorization)
	if err != nil {
		return nil, h.protocolFailure(ctx, err)
	}
	return &api.OAuthTokenResponseHeaders{CacheControl: api.NewOptString("no-store"), Response: api.OAuthTokenResponse{
		AccessToken: res.AccessToken, TokenType: api.OAuthTokenResponseTokenTypeBearer, ExpiresIn: int(res.ExpiresIn),
		RefreshToken: res.RefreshToken, Scope: res.Scope,
	}}, nil
}

// OAuthRevokeToken serves the revocation endpoint (RFC 7009): the grant behind the token ends.
func (h *OAuth) OAuthRevokeToken(ctx context.Context, req *api.OAuthRevokeRequest) error {
	form := formOf(map[string]api.OptString{"client_id": req.ClientID, "client_secret": req.ClientSecret})
	form.Set("token", req.Token)
	if hint, ok := req.TokenTypeHint.Get(); ok {
		form.Set("token_type_hint", string(hint))
	}
	return h.protocolFailure(ctx, h.provider.Revoke(ctx, form, rawFrom(ctx).authorization))
}

// --- the consent page

// consentLimit bounds consent page requests per source address.
var consentLimit = auth.Limit{Max: 120, Window: time.Minute}

// consentSession is the person signed in on the consent page (nil when nobody is, or the sign-in expired).
func (h *OAuth) consentSession(ctx context.Context) (*auth.Principal, error) {
	token := rawFrom(ctx).session
	if token == "" {
		return nil, nil
	}
	p, err := h.authn.Authenticate(ctx, token)
	if err != nil {
		var e *apierror.Error
		if errors.As(err, &e) && e.Status < 500 {
			return nil, nil
		}
		return nil, err
	}
	if !p.IsSession() {
		return nil, nil
	}
	return p, nil
}

// authorizeValues collects an authorization request's parameters.
func authorizeValues(responseType, clientID, redirectURI string, scope, state, challenge, method api.OptString) url.Values {
	q := formOf(map[string]api.OptString{"scope": scope, "state": state, "code_challenge": challenge, "code_challenge_method": method})
	q.Set("response_type", responseType)
	q.Set("client_id", clientID)
	q.Set("redirect_uri", redirectURI)
	return q
}

// OAuthAuthorizeShowConsent validates the authorization request and shows the consent page, or sends the
// browser to sign in first, or back to the app with an error.
func (h *OAuth) OAuthAuthorizeShowConsent(ctx context.Context, params api.OAuthAuthorizeShowConsentParams) (api.OAuthAuthorizeShowConsentRes, error) {
	if err := h.limiter.Allow(ctx, "oauth_authorize:ip:"+reqctx.From(ctx).ClientIP, consentLimit); err != nil {
		return nil, err
	}
	a, err := h.provider.CheckAuthorize(ctx, authorizeValues(params.ResponseType, params.ClientID, params.RedirectURI,
		params.Scope, params.State, params.CodeChallenge, params.CodeChallengeMethod))
	var redirect *oauth.RedirectError
	if errors.As(err, &redirect) {
		return &api.OAuthAuthorizeShowConsentFound{Location: redirect.Location}, nil
	}
	if err != nil {
		return nil, err
	}
	p, err := h.consentSession(ctx)
	if err != nil {
		return nil, err
	}
	if p == nil {
		next := consentPath + "?" + a.Params.Encode()
		return &api.OAuthAuthorizeShowConsentFound{Location: signInPath + "?" + url.Values{"next": {next}}.Encode()}, nil
	}
	user, err := h.queries.UserGetByID(ctx, h.pool, p.UserID)
	if err != nil {
		return nil, err
	}
	orgs, err := h.provider.ApprovableOrganizations(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	page := oauth.ConsentPage{Request: a, Email: user.Email, Organizations: orgs, CSRF: h.provider.ConsentToken(p.CredentialID, a)}
	return &api.OAuthAuthorizeShowConsentOK{Data: bytes.NewReader(page.Render())}, nil
}

// OAuthAuthorizeSubmitConsent records the decision posted from the consent page and sends the browser back to
// the app: with a code on approval, with access_denied on denial.
func (h *OAuth) OAuthAuthorizeSubmitConsent(ctx context.Context, req *api.OAuthConsentDecision) (*api.OAuthAuthorizeSubmitConsentFound, error) {
	if err := h.limiter.Allow(ctx, "oauth_authorize:ip:"+reqctx.From(ctx).ClientIP, consentLimit); err != nil {
		return nil, err
	}
	method := api.OptString{}
	if m, ok := req.CodeChallengeMethod.Get(); ok {
		method = api.NewOptString(string(m))
	}
	a, err := h.provider.CheckAuthorize(ctx, authorizeValues(string(req.ResponseType), req.ClientID, req.RedirectURI,
		req.Scope, req.State, req.CodeChallenge, method))
	var redirect *oauth.RedirectError
	if errors.As(err, &redirect) {
		return &api.OAuthAuthorizeSubmitConsentFound{Location: redirect.Location}, nil
	}
	if err != nil {
		return nil, err
	}
	p, err := h.consentSession(ctx)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, apierror.Unauthorized("sign_in_required", "Sign in on the consent page before deciding.")
	}
	if !h.provider.CheckConsentToken(p.CredentialID, a, req.CsrfToken) {
		return nil, apierror.Forbidden("invalid_csrf_token", "The consent form is stale or was not issued for this sign-in. Reload the page.")
	}
	if req.Decision == api.OAuthConsentDecisionDecisionDeny {
		return &api.OAuthAuthorizeSubmitConsentFound{Location: h.provider.DenyLocation(a)}, nil
	}
	// The approving person is the audit log's actor.
	location, err := h.provider.Approve(auth.WithPrincipal(ctx, p), a, p.UserID, req.OrganizationID)
	if errors.As(err, &redirect) {
		return &api.OAuthAuthorizeSubmitConsentFound{Location: redirect.Location}, nil
	}
	if err != nil {
		return nil, err
	}
	if a.Client.WebhookUrl != "" && h.webhooks != nil {
		// The approval created the app's managed endpoint; its challenge goes out now that it has committed.
		// The grant stands either way: a challenge that cannot be scheduled is logged, and the endpoint waits
		// unverified for POST /webhooks/{id}/verify.
		if err := h.webhooks.ChallengeManaged(ctx, req.OrganizationID, a.Client.ID, a.Client.WebhookUrl); err != nil {
			apierror.Log(ctx, h.logger, apierror.Internal(err))
		}
	}
	return &api.OAuthAuthorizeSubmitConsentFound{Location: location}, nil
}

// signIn serves the consent flow's sign-in page: email and password, then the emailed code, then the TOTP code
// when 2FA is on (accounts.Flows, as the API's sign-in). The session it opens is kept in an HttpOnly cookie
// sent only to /oauth, and the browser goes back to the authorization request it came from.
func (h *OAuth) signIn(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	switch r.Method {
	case http.MethodGet:
		writePage(w, http.StatusOK, oauth.SignInPage{Step: "password", Next: safeNext(r.URL.Query().Get("next"))}.Render())
		return
	case http.MethodPost:
	default:
		w.Header().Set("Allow", "GET, POST")
		apierror.Write(w, r, h.logger, apierror.New(http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not allowed here; allowed: GET, POST."))
		return
	}
	if err := r.ParseForm(); err != nil {
		apierror.Write(w, r, h.logger, apierror.BadRequest("invalid_body", "The form could not be read."))
		return
	}
	f := r.PostForm
	page := oauth.SignInPage{Step: f.Get("step"), Next: safeNext(f.Get("next")), Email: f.Get("email"), Handle: f.Get("handle")}
	fail := func(err error) {
		e := apierror.From(err)
		apierror.Log(ctx, h.logger, e)
		page.Error = e.Message
		if e.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
		}
		writePage(w, e.Status, page.Render())
	}
	var pair accounts.TokenPair
	switch page.Step {
	case "password":
		handle, err := h.flows.LoginStart(ctx, f.Get("email"), f.Get("password"), f.Get("captcha"))
		if err != nil {
			fail(err)
			return
		}
		page.Step, page.Handle = "code", handle
		writePage(w, http.StatusOK, page.Render())
		return
	case "code":
		res, err := h.flows.LoginConfirm(ctx, page.Handle, strings.TrimSpace(f.Get("code")))
		if err != nil {
			fail(err)
			return
		}
		if res.Tokens == nil {
			page.Step, page.Handle = "totp", res.PendingToken
			writePage(w, http.StatusOK, page.Render())
			return
		}
		pair = *res.Tokens
	case "totp":
		var err error
		if pair, err = h.twoFactor.VerifyLogin(ctx, page.Handle, strings.TrimSpace(f.Get("code"))); err != nil {
			fail(err)
			return
		}
	default:
		page.Step = "password"
		fail(apierror.BadRequest("invalid_step", "Start the sign-in again."))
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: consentCookie, Value: pair.AccessToken, Path: "/oauth", Expires: pair.AccessExpiresAt,
		MaxAge: max(int(time.Until(pair.AccessExpiresAt).Seconds()), 1), HttpOnly: true, Secure: h.secureCookie,
		SameSite: http.SameSiteLaxMode,
	})
	http.Redirect(w, r, page.Next, http.StatusSeeOther)
}

// safeNext keeps a post-sign-in destination only when it is this server's consent page: never another host.
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Path != consentPath || strings.HasPrefix(next, "//") {
		return consentPath
	}
	return u.RequestURI()
}

func writePage(w http.ResponseWriter, status int, page []byte) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(page)
}

// --- OAuth applications

const sortOAuthApplications = "oauth_applications:created_at:desc"

// oauthAppFields are an application's registrable fields, validated.
type oauthAppFields struct {
	name, description, logo, website, webhookURL string
	redirectURIs, domains, events                []string
	scopes                                       auth.Permission
}

// validHTTPURL accepts "" or an absolute http(s) URL of at most 2000 characters.
func validHTTPURL(field, v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || len(v) > 2000 || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return apierror.BadRequest("invalid_url", field+" must be an http(s) URL of at most 2000 characters.")
	}
	return nil
}

// check validates the fields the way create and update both require.
func (f *oauthAppFields) check() error {
	name, err := orgName(f.name)
	if err != nil {
		return err
	}
	f.name = name
	if len([]rune(f.description)) > 2000 {
		return apierror.BadRequest("invalid_description", "description must be at most 2000 characters.")
	}
	if err := validHTTPURL("logo", f.logo); err != nil {
		return err
	}
	if err := validHTTPURL("website", f.website); err != nil {
		return err
	}
	if err := oauth.ValidateRedirectURIs(f.redirectURIs, false); err != nil {
		return apierror.BadRequest("invalid_redirect_uri", err.Error()+".")
	}
	if f.scopes == 0 {
		return apierror.BadRequest("invalid_scopes", "scopes must name at least one scope.")
	}
	if f.domains, err = oauth.NormalizeWebhookDomains(f.domains); err != nil {
		return apierror.BadRequest("invalid_webhook_domain", err.Error()+".")
	}
	if err := oauth.ValidateWebhookURL(f.webhookURL, f.domains); err != nil {
		return apierror.BadRequest("invalid_webhook_url", err.Error()+".")
	}
	return nil
}

func scopesFrom(in []api.OAuthScope) (auth.Permission, error) {
	names := make([]string, len(in))
	for i, s := range in {
		names[i] = string(s)
	}
	p, err := oauth.ParseScopeNames(names)
	if err != nil {
		return 0, apierror.BadRequest("unknown_scope", err.Error()+".")
	}
	return p, nil
}

func eventsFrom(in []api.WebhookEventType) []string {
	out := make([]string, 0, len(in))
	for _, e := range in {
		if !slices.Contains(out, string(e)) {
			out = append(out, string(e))
		}
	}
	return out
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// oauthApplicationOf maps an application row.
func oauthApplicationOf(r dbq.OauthClient) api.OAuthApplication {
	c := oauth.Client{OauthClient: r}
	names := oauth.ScopeNames(c.AllowedScopes())
	out := api.OAuthApplication{
		ID: r.ID, OrganizationID: r.OrganizationID.UUID, ClientID: r.ClientID, ClientType: api.OAuthClientType(r.ClientType),
		Name: r.Name, RedirectUris: orEmpty(r.RedirectUris), Scopes: make([]api.OAuthScope, len(names)),
		AllowedWebhookDomains: orEmpty(r.AllowedWebhookDomains), WebhookURL: r.WebhookUrl,
		WebhookEvents: make([]api.WebhookEventType, len(r.WebhookEvents)), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
	for i, n := range names {
		out.Scopes[i] = api.OAuthScope(n)
	}
	for i, e := range r.WebhookEvents {
		out.WebhookEvents[i] = api.WebhookEventType(e)
	}
	if r.Description != "" {
		out.Description = api.NewOptString(r.Description)
	}
	if r.Logo != "" {
		out.Logo = api.NewOptString(r.Logo)
	}
	if r.Website != "" {
		out.Website = api.NewOptString(r.Website)
	}
	return out
}

// oauthAppAudit is the metadata an application's audit entries keep: what it is and where it points.
func oauthAppAudit(r dbq.OauthClient) map[string]any {
	return map[string]any{"name": r.Name, "client": r.ClientID, "client_type": r.ClientType,
		"scopes": oauth.ScopeNames(auth.Permission(uint64(r.Scopes))), "redirect_uris": r.RedirectUris, "webhook_url": r.WebhookUrl}
}

// OAuthApplicationsCreate registers an app of the current organization; the client secret (confidential apps)
// and the webhook secret are in this answer.
func (h *OAuth) OAuthApplicationsCreate(ctx context.Context, req *api.OAuthApplicationCreate, _ api.OAuthApplicationsCreateParams) (*api.OAuthApplicationWithSecrets, error) {
	_, org, err := managerCaller(ctx, auth.ManageAPIKeys)
	if err != nil {
		return nil, err
	}
	scopes, err := scopesFrom(req.Scopes)
	if err != nil {
		return nil, err
	}
	f := oauthAppFields{name: req.Name, description: req.Description.Value, logo: req.Logo.Value, website: req.Website.Value,
		webhookURL: req.WebhookURL.Value, redirectURIs: req.RedirectUris, domains: req.AllowedWebhookDomains,
		events: eventsFrom(req.WebhookEvents), scopes: scopes}
	if err := f.check(); err != nil {
		return nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	clientType, method := oauth.ClientConfidential, oauth.AuthMethodBasic
	var secret string
	var hash []byte
	if req.ClientType.Or(api.OAuthApplicationCreateClientTypeConfidential) == api.OAuthApplicationCreateClientTypePublic {
		clientType, method = oauth.ClientPublic, oauth.AuthMethodNone
	} else if secret, hash, err = oauth.NewClientSecret(); err != nil {
		return nil, err
	}
	webhookSecret := oauth.NewWebhookSecret()
	var row dbq.OauthClient
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		row, err = h.queries.OAuthApplicationCreate(ctx, tx, dbq.OAuthApplicationCreateParams{
			ID: id, OrganizationID: org, ClientID: oauth.NewClientID(), ClientType: clientType, TokenEndpointAuthMethod: method,
			SecretHash: hash, Name: f.name, Description: f.description, Logo: f.logo, Website: f.website,
			RedirectUris: f.redirectURIs, GrantTypes: []string{oauth.GrantAuthorizationCode, oauth.GrantRefreshToken},
			Scopes: int64(f.scopes), AllowedWebhookDomains: f.domains, WebhookUrl: f.webhookURL, WebhookEvents: f.events,
			WebhookSecretSealed: oauth.SealWebhookSecret(h.keyring, id, webhookSecret),
		})
		if err != nil {
			return db.Classify(err, "OAuth application")
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "oauth_application.created", EntityType: audit.EntityOAuthApplication,
			EntityID: id.String(), Metadata: oauthAppAudit(row)})
	})
	if err != nil {
		return nil, err
	}
	a := oauthApplicationOf(row)
	out := &api.OAuthApplicationWithSecrets{
		ID: a.ID, OrganizationID: a.OrganizationID, ClientID: a.ClientID, ClientType: a.ClientType, Name: a.Name,
		Description: a.Description, Logo: a.Logo, Website: a.Website, RedirectUris: a.RedirectUris, Scopes: a.Scopes,
		AllowedWebhookDomains: a.AllowedWebhookDomains, WebhookURL: a.WebhookURL, WebhookEvents: a.WebhookEvents,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt, WebhookSecret: webhookSecret,
	}
	if secret != "" {
		out.ClientSecret = api.NewOptString(secret)
	}
	return out, nil
}

// OAuthApplicationsList lists the current organization's apps, newest first.
func (h *OAuth) OAuthApplicationsList(ctx context.Context, params api.OAuthApplicationsListParams) (*api.OAuthApplicationList, error) {
	_, org, err := managerCaller(ctx, auth.ManageAPIKeys)
	if err != nil {
		return nil, err
	}
	limit, err := orgListLimit(params.Limit)
	if err != nil {
		return nil, err
	}
	page, err := keysetPage(ctx, h.pool, h.cursors, org, sortOAuthApplications, params.Cursor, limit,
		func(ctx context.Context, tx pgx.Tx, after *timeKey, rowLimit int32) ([]dbq.OauthClient, error) {
			args := dbq.OAuthApplicationListParams{OrganizationID: org, RowLimit: rowLimit}
			args.BeforeCreatedAt, args.BeforeID = after.bounds()
			return h.queries.OAuthApplicationList(ctx, tx, args)
		},
		func(r dbq.OauthClient) timeKey { return timeKey{At: r.CreatedAt, ID: r.ID} })
	if err != nil {
		return nil, err
	}
	out := &api.OAuthApplicationList{Data: make([]api.OAuthApplication, len(page.Data)), Pagination: orgPageInfo(page)}
	for i, r := range page.Data {
		out.Data[i] = oauthApplicationOf(r)
	}
	return out, nil
}

// OAuthApplicationsGet returns one app of the current organization.
func (h *OAuth) OAuthApplicationsGet(ctx context.Context, params api.OAuthApplicationsGetParams) (*api.OAuthApplication, error) {
	_, org, err := managerCaller(ctx, auth.ManageAPIKeys)
	if err != nil {
		return nil, err
	}
	var row dbq.OauthClient
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		row, err = h.queries.OAuthApplicationGet(ctx, tx, dbq.OAuthApplicationGetParams{OrganizationID: org, ID: params.ID})
		return db.Classify(err, "OAuth application")
	})
	if err != nil {
		return nil, err
	}
	out := oauthApplicationOf(row)
	return &out, nil
}

// OAuthApplicationsUpdate changes the fields sent and checks the result as create does. Narrowing the scopes
// narrows existing grants at once (tokens carry the intersection); it never widens them.
func (h *OAuth) OAuthApplicationsUpdate(ctx context.Context, req *api.OAuthApplicationUpdate, params api.OAuthApplicationsUpdateParams) (*api.OAuthApplication, error) {
	_, org, err := managerCaller(ctx, auth.ManageAPIKeys)
	if err != nil {
		return nil, err
	}
	var row dbq.OauthClient
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		cur, err := h.queries.OAuthApplicationGetForUpdate(ctx, tx, dbq.OAuthApplicationGetForUpdateParams{OrganizationID: org, ID: params.ID})
		if err != nil {
			return db.Classify(err, "OAuth application")
		}
		f := oauthAppFields{name: req.Name.Or(cur.Name), description: req.Description.Or(cur.Description),
			logo: req.Logo.Or(cur.Logo), website: req.Website.Or(cur.Website), webhookURL: req.WebhookURL.Or(cur.WebhookUrl),
			redirectURIs: cur.RedirectUris, domains: cur.AllowedWebhookDomains, events: cur.WebhookEvents,
			scopes: auth.Permission(uint64(cur.Scopes))}
		var changed []string
		for field, set := range map[string]bool{"name": req.Name.Set, "description": req.Description.Set, "logo": req.Logo.Set,
			"website": req.Website.Set, "webhook_url": req.WebhookURL.Set, "redirect_uris": req.RedirectUris != nil,
			"scopes": req.Scopes != nil, "allowed_webhook_domains": req.AllowedWebhookDomains != nil, "webhook_events": req.WebhookEvents != nil} {
			if set {
				changed = append(changed, field)
			}
		}
		slices.Sort(changed)
		if req.RedirectUris != nil {
			f.redirectURIs = req.RedirectUris
		}
		if req.Scopes != nil {
			if f.scopes, err = scopesFrom(req.Scopes); err != nil {
				return err
			}
		}
		if req.AllowedWebhookDomains != nil {
			f.domains = req.AllowedWebhookDomains
		}
		if req.WebhookEvents != nil {
			f.events = eventsFrom(req.WebhookEvents)
		}
		if err := f.check(); err != nil {
			return err
		}
		row, err = h.queries.OAuthApplicationUpdate(ctx, tx, dbq.OAuthApplicationUpdateParams{
			OrganizationID: org, ID: params.ID, Name: f.name, Description: f.description, Logo: f.logo, Website: f.website,
			RedirectUris: f.redirectURIs, Scopes: int64(f.scopes), AllowedWebhookDomains: f.domains,
			WebhookUrl: f.webhookURL, WebhookEvents: f.events,
		})
		if err != nil {
			return db.Classify(err, "OAuth application")
		}
		meta := oauthAppAudit(row)
		meta["changed"] = changed
		if row.WebhookUrl != cur.WebhookUrl {
			// The managed endpoints in every organization that authorized the app follow its webhook_url; a new
			// host makes them unverified again.
			touched, err := h.queries.OAuthAppWebhookEndpointSync(ctx, tx, dbq.OAuthAppWebhookEndpointSyncParams{
				ClientID: row.ID, Rearm: urlHost(row.WebhookUrl) != urlHost(cur.WebhookUrl)})
			if err != nil {
				return err
			}
			meta["webhook_endpoints_updated"] = touched
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "oauth_application.updated", EntityType: audit.EntityOAuthApplication,
			EntityID: row.ID.String(), Metadata: meta})
	})
	if err != nil {
		return nil, err
	}
	out := oauthApplicationOf(row)
	return &out, nil
}

// OAuthApplicationsDelete removes an app: its grants in every organization, and their tokens, go with it.
func (h *OAuth) OAuthApplicationsDelete(ctx context.Context, params api.OAuthApplicationsDeleteParams) error {
	_, org, err := managerCaller(ctx, auth.ManageAPIKeys)
	if err != nil {
		return err
	}
	return db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		cur, err := h.queries.OAuthApplicationGetForUpdate(ctx, tx, dbq.OAuthApplicationGetForUpdateParams{OrganizationID: org, ID: params.ID})
		if err != nil {
			return db.Classify(err, "OAuth application")
		}
		if _, err := h.queries.OAuthApplicationDelete(ctx, tx, dbq.OAuthApplicationDeleteParams{OrganizationID: org, ID: params.ID}); err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionDelete, Event: "oauth_application.deleted", EntityType: audit.EntityOAuthApplication,
			EntityID: cur.ID.String(), Metadata: oauthAppAudit(cur)})
	})
}

// OAuthApplicationsGetWebhookSecret returns the app's current webhook signing secret.
func (h *OAuth) OAuthApplicationsGetWebhookSecret(ctx context.Context, params api.OAuthApplicationsGetWebhookSecretParams) (*api.OAuthApplicationWebhookSecret, error) {
	org, err := teamCaller(ctx, auth.APIKeys, "API_KEYS", auth.ManageAPIKeys)
	if err != nil {
		return nil, err
	}
	var secret string
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		row, err := h.queries.OAuthApplicationGet(ctx, tx, dbq.OAuthApplicationGetParams{OrganizationID: org, ID: params.ID})
		if err != nil {
			return db.Classify(err, "OAuth application")
		}
		secret, err = oauth.OpenWebhookSecret(h.keyring, row.ID, row.WebhookSecretSealed)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &api.OAuthApplicationWebhookSecret{WebhookSecret: secret}, nil
}

// OAuthApplicationsRotateWebhookSecret replaces the app's webhook signing secret and returns the new one.
func (h *OAuth) OAuthApplicationsRotateWebhookSecret(ctx context.Context, params api.OAuthApplicationsRotateWebhookSecretParams) (*api.OAuthApplicationWebhookSecret, error) {
	org, err := teamCaller(ctx, auth.APIKeys, "API_KEYS", auth.ManageAPIKeys)
	if err != nil {
		return nil, err
	}
	secret := oauth.NewWebhookSecret()
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		n, err := h.queries.OAuthApplicationSetWebhookSecret(ctx, tx, dbq.OAuthApplicationSetWebhookSecretParams{
			OrganizationID: org, ID: params.ID, WebhookSecretSealed: oauth.SealWebhookSecret(h.keyring, params.ID, secret)})
		if err != nil {
			return err
		}
		if n == 0 {
			return apierror.NotFound("not_found", "OAuth application not found.")
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionRotateSecret, Event: "oauth_application.webhook_secret_rotated",
			EntityType: audit.EntityOAuthApplication, EntityID: params.ID.String()})
	})
	if err != nil {
		return nil, err
	}
	return &api.OAuthApplicationWebhookSecret{WebhookSecret: secret}, nil
}

// OAuthApplicationsListWebhookEndpoints lists the app's managed endpoints, one per organization that
// authorized it (created on authorization, removed on revocation), oldest install first.
func (h *OAuth) OAuthApplicationsListWebhookEndpoints(ctx context.Context, params api.OAuthApplicationsListWebhookEndpointsParams) (*api.OAuthApplicationWebhookEndpointList, error) {
	org, err := teamCaller(ctx, auth.APIKeys, "API_KEYS", auth.ManageAPIKeys)
	if err != nil {
		return nil, err
	}
	var rows []dbq.WebhookEndpoint
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := h.queries.OAuthApplicationGet(ctx, tx, dbq.OAuthApplicationGetParams{OrganizationID: org, ID: params.ID}); err != nil {
			return db.Classify(err, "OAuth application")
		}
		rows, err = h.queries.OAuthAppWebhookEndpointList(ctx, tx, params.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.OAuthApplicationWebhookEndpointList{Endpoints: make([]api.OAuthApplicationWebhookEndpoint, len(rows))}
	for i, r := range rows {
		out.Endpoints[i] = api.OAuthApplicationWebhookEndpoint{
			ID: r.ID, OrganizationID: r.OrganizationID, URL: r.Url, Enabled: r.Enabled, VerifiedAt: nilDateTimeOf(r.VerifiedAt),
			ConsecutiveFailures: int(r.ConsecutiveFailures), LastSuccessAt: nilDateTimeOf(r.LastSuccessAt),
			LastFailureAt: nilDateTimeOf(r.LastFailureAt),
		}
	}
	return out, nil
}
