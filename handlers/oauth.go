package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/pagination"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
	"github.com/outflowhq/outflow/internal/platform/seal"
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

// selfRegistrableScopes are the scopes a client that registers itself (RFC 7591, as MCP clients do) can be
// granted: every scope but those oauth.SelfRegisteredForbidden keeps for apps registered by people.
// Discovery offers exactly these (scopes_supported, the MCP challenge's scope), because a client asking for
// a scope it cannot hold fails its registration.
const selfRegistrableScopes = auth.FullAccess &^ oauth.SelfRegisteredForbidden

// offeredScopes lists selfRegistrableScopes for the discovery documents.
func offeredScopes() []api.OAuthScope {
	names := oauth.ScopeNames(selfRegistrableScopes)
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
		ScopesSupported:       offeredScopes(),
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
	return h.protectedResourceMetadata(), nil
}

// OAuthGetProtectedResourceMetadataMcp answers the same document at the address RFC 9728 derives from the
// resource URL <root>/v1/mcp, where MCP clients look first.
func (h *OAuth) OAuthGetProtectedResourceMetadataMcp(ctx context.Context) (*api.OAuthProtectedResourceMetadata, error) {
	return h.protectedResourceMetadata(), nil
}

// protectedResourceMetadata is the RFC 9728 document of the MCP endpoint.
func (h *OAuth) protectedResourceMetadata() *api.OAuthProtectedResourceMetadata {
	p := h.provider
	return &api.OAuthProtectedResourceMetadata{
		Resource:             mustURL(p.MCPResource()),
		AuthorizationServers: []url.URL{mustURL(p.Issuer())},
		ScopesSupported:      offeredScopes(),
		BearerMethodsSupported: []api.OAuthProtectedResourceMetadataBearerMethodsSupportedItem{
			api.OAuthProtectedResourceMetadataBearerMethodsSupportedItemHeader},
		ResourceName: api.NewOptString("Outflow MCP"),
	}
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
