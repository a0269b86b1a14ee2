package oauth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/ory/fosite"
	"github.com/ory/fosite/compose"
	"github.com/ory/fosite/handler/oauth2"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// Lifetimes (part 1, Limits).
const (
	AuthorizeCodeLifespan = 10 * time.Minute
	AccessTokenLifespan   = time.Hour
	RefreshTokenLifespan  = 90 * 24 * time.Hour
)

// RateLimitPerMinute is the request budget of an OAuth access token, the API-key default.
const RateLimitPerMinute = 60

// accessTokenPrefix starts every access token fosite's HMAC strategy issues.
const accessTokenPrefix = "ory_at_"

// Provider is the authorization server: fosite composed over the Postgres store with exactly the OAuth 2.1
// pieces this server offers (authorization code, PKCE S256, refresh rotation, revocation), plus what the
// endpoints need around it.
type Provider struct {
	fosite    fosite.OAuth2Provider
	strategy  *oauth2.HMACSHAStrategy
	store     *Store
	pool      *pgxpool.Pool
	queries   *dbq.Queries
	limiter   *auth.Limiter
	publicURL string
	csrfKey   []byte
}

// NewProvider builds the authorization server. publicURL is the deployment root the discovery documents and
// the token endpoint name; secrets are the deployment secret keys, current first: token HMACs and consent
// CSRF tokens are keyed by values derived from them, and tokens minted under a previous key stay valid.
func NewProvider(pool *pgxpool.Pool, limiter *auth.Limiter, publicURL string, secrets ...[]byte) (*Provider, error) {
	if len(secrets) == 0 || len(secrets[0]) < 32 {
		return nil, errors.New("oauth: a secret key of at least 32 bytes is required")
	}
	hmacKeys := make([][]byte, len(secrets))
	for i, s := range secrets {
		hmacKeys[i] = derive(s, "outflow oauth2 token hmac")
	}
	store := NewStore(pool)
	cfg := &fosite.Config{
		AuthorizeCodeLifespan: AuthorizeCodeLifespan,
		AccessTokenLifespan:   AccessTokenLifespan,
		RefreshTokenLifespan:  RefreshTokenLifespan,
		GlobalSecret:          hmacKeys[0],
		RotatedGlobalSecrets:  hmacKeys[1:],
		// PKCE: S256 only; public clients must use it, confidential ones may.
		EnforcePKCEForPublicClients:    true,
		EnablePKCEPlainChallengeMethod: false,
		ScopeStrategy:                  fosite.ExactScopeStrategy,
		AudienceMatchingStrategy:       fosite.DefaultAudienceMatchingStrategy,
		// Every token response carries a refresh token; no offline_access scope is needed for one.
		RefreshTokenScopes: []string{},
		// The code keeps its redirect_uri, so the token request must repeat it exactly.
		SanitationWhiteList: []string{"redirect_uri"},
		TokenURL:            publicURL + "/v1/oauth/token",
	}
	strategy := compose.NewOAuth2HMACStrategy(cfg)
	f := compose.Compose(cfg, store, strategy,
		compose.OAuth2AuthorizeExplicitFactory,
		compose.OAuth2RefreshTokenGrantFactory,
		compose.OAuth2TokenRevocationFactory,
		compose.OAuth2PKCEFactory,
	)
	return &Provider{
		fosite: f, strategy: strategy, store: store, pool: pool, queries: dbq.New(), limiter: limiter,
		publicURL: publicURL, csrfKey: derive(secrets[0], "outflow oauth consent csrf"),
	}, nil
}

// derive is a purpose-bound key from a deployment secret.
func derive(secret []byte, purpose string) []byte {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(purpose))
	return mac.Sum(nil)
}

// Store is the provider's token store.
func (p *Provider) Store() *Store { return p.store }

// Issuer is the authorization server's identifier (RFC 8414): the deployment root.
func (p *Provider) Issuer() string { return p.publicURL }

// AuthorizationEndpoint is the consent page.
func (p *Provider) AuthorizationEndpoint() string { return p.publicURL + "/oauth/authorize" }

// TokenEndpoint exchanges codes and refresh tokens.
func (p *Provider) TokenEndpoint() string { return p.publicURL + "/v1/oauth/token" }

// RegistrationEndpoint registers clients (RFC 7591).
func (p *Provider) RegistrationEndpoint() string { return p.publicURL + "/v1/oauth/register" }

// RevocationEndpoint revokes tokens (RFC 7009).
func (p *Provider) RevocationEndpoint() string { return p.publicURL + "/v1/oauth/revoke" }

// MCPResource is the protected resource the resource metadata document describes.
func (p *Provider) MCPResource() string { return p.publicURL + "/v1/mcp" }

// Error is a failure of the OAuth protocol endpoints, answered in their own terms: Code is the RFC error code
// (invalid_grant, invalid_client, invalid_client_metadata ...) and Description says why (RFC 6749 §5.2, RFC 7009
// §2.2.1, RFC 7591 §3.2.2).
type Error struct {
	Status      int
	Code        string
	Description string
	cause       error
}

// Error implements error.
func (e *Error) Error() string { return e.Code + ": " + e.Description }

// Unwrap exposes the cause for logging.
func (e *Error) Unwrap() error { return e.cause }

// protocolError turns a fosite error into an *Error; a server-side failure stays an internal error whose
// cause is logged and never shown.
func protocolError(err error) error {
	rfc := fosite.ErrorToRFC6749Error(err)
	switch {
	case errors.Is(err, errAlreadyRedeemed), errors.Is(err, fosite.ErrInvalidatedAuthorizeCode),
		rfc.CodeField >= 500 && errors.Is(err, fosite.ErrNotFound):
		// fosite reports a storage failure while redeeming as a server error; these are the client's replay: a
		// concurrent redemption redeemed the code first (while this one redeemed it, or between this request's
		// checks and its redemption), or a replay of it revoked the grant and its code meanwhile.
		return &Error{Status: http.StatusBadRequest, Code: "invalid_grant", Description: "The authorization code has already been used.", cause: err}
	case rfc.CodeField == http.StatusServiceUnavailable:
		return apierror.Unavailable("temporarily_unavailable", "The authorization server is busy. Retry the request.").WithCause(err)
	case rfc.CodeField >= 500 || rfc.CodeField == 0:
		return apierror.Internal(err)
	}
	return &Error{Status: rfc.CodeField, Code: rfc.ErrorField, Description: rfc.GetDescription(), cause: err}
}

// formRequest rebuilds the form POST fosite reads from the fields the typed operation decoded, plus the
// Authorization header (client_secret_basic) the operation does not model.
func formRequest(ctx context.Context, target string, form url.Values, authorization string) *http.Request {
	r, _ := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if authorization != "" {
		r.Header.Set("Authorization", authorization)
	}
	return r
}

// bothClientAuthMethods refuses a request that authenticates the client twice (RFC 6749 §2.3: at most one
// method per request); fosite alone would silently prefer HTTP Basic.
func bothClientAuthMethods(form url.Values, authorization string) error {
	scheme, _, _ := strings.Cut(authorization, " ")
	if strings.EqualFold(scheme, "Basic") && form.Get("client_secret") != "" {
		return &Error{Status: http.StatusBadRequest, Code: "invalid_request",
			Description: "Authenticate the client once: HTTP Basic or client_secret in the body, not both."}
	}
	return nil
}

// TokenResponse is what the token endpoint answers.
type TokenResponse struct {
	AccessToken  string
	RefreshToken string
	ExpiresIn    int64
	Scope        string
}

// Token serves the token endpoint: the authorization_code and refresh_token grants. form holds the request
// fields, authorization the request's Authorization header. Failures are *Error in RFC terms.
func (p *Provider) Token(ctx context.Context, form url.Values, authorization string) (TokenResponse, error) {
	switch gt := form.Get("grant_type"); gt {
	case GrantAuthorizationCode, GrantRefreshToken:
	case "":
		return TokenResponse{}, &Error{Status: http.StatusBadRequest, Code: "invalid_request", Description: "grant_type is required."}
	default:
		return TokenResponse{}, &Error{Status: http.StatusBadRequest, Code: "unsupported_grant_type",
			Description: fmt.Sprintf("grant_type %q is not supported: use authorization_code or refresh_token.", gt)}
	}
	if err := bothClientAuthMethods(form, authorization); err != nil {
		return TokenResponse{}, err
	}
	ctx, release := p.store.Guard(ctx)
	defer release()
	// Any grant fosite revokes while serving a token request is revoked for replay or reuse.
	ctx = WithRevocationReason(ctx, "token_reuse")
	r := formRequest(ctx, p.TokenEndpoint(), form, authorization)
	ar, err := p.fosite.NewAccessRequest(ctx, r, &Session{})
	if err != nil {
		return TokenResponse{}, protocolError(err)
	}
	resp, err := p.fosite.NewAccessResponse(ctx, ar)
	if err != nil {
		return TokenResponse{}, protocolError(err)
	}
	out := TokenResponse{AccessToken: resp.GetAccessToken(), ExpiresIn: int64(AccessTokenLifespan / time.Second)}
	if v, ok := resp.GetExtra("refresh_token").(string); ok {
		out.RefreshToken = v
	}
	if v, ok := resp.GetExtra("expires_in").(int64); ok && v > 0 {
		out.ExpiresIn = v
	}
	if v, ok := resp.GetExtra("scope").(string); ok {
		out.Scope = v
	}
	return out, nil
}

// Revoke serves the revocation endpoint (RFC 7009): revoking either token of a grant revokes the grant. An
// unknown, expired or already revoked token is no error.
func (p *Provider) Revoke(ctx context.Context, form url.Values, authorization string) error {
	if form.Get("token") == "" {
		return &Error{Status: http.StatusBadRequest, Code: "invalid_request", Description: "token is required."}
	}
	switch form.Get("token_type_hint") {
	case "", "access_token", "refresh_token":
	default:
		return &Error{Status: http.StatusBadRequest, Code: "unsupported_token_type", Description: "token_type_hint must be access_token or refresh_token."}
	}
	if err := bothClientAuthMethods(form, authorization); err != nil {
		return err
	}
	ctx, release := p.store.Guard(ctx)
	defer release()
	ctx = WithRevocationReason(ctx, "revoked_by_client")
	if err := p.fosite.NewRevocationRequest(ctx, formRequest(ctx, p.RevocationEndpoint(), form, authorization)); err != nil {
		return protocolError(err)
	}
	return nil
}

// VerifyAccessToken implements auth.OAuthVerifier: an access token of a live grant authenticates as the grant,
// in its organization, with the scopes the grant and the app still hold. It answers (nil, nil) for anything
// that is not a valid access token of this server, which the authenticator refuses like any bad credential.
func (p *Provider) VerifyAccessToken(ctx context.Context, token string) (*auth.Principal, error) {
	if !strings.HasPrefix(token, accessTokenPrefix) || len(token) > 512 {
		return nil, nil
	}
	row, err := p.queries.OAuthAccessTokenVerify(ctx, p.pool, p.strategy.AccessTokenSignature(ctx, token))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("verify OAuth access token: %w", err)
	}
	// The row was found by signature; the HMAC proves the token was minted here (a leaked signature alone is
	// not a token) and the session's expiry is checked with it.
	probe := &fosite.Request{Session: &Session{ExpiresAt: map[fosite.TokenType]time.Time{fosite.AccessToken: row.ExpiresAt}}}
	if err := p.strategy.ValidateAccessToken(ctx, probe, token); err != nil {
		return nil, nil
	}
	return &auth.Principal{
		Kind:               auth.KindOAuth,
		CredentialID:       row.GrantID,
		OrganizationID:     row.OrganizationID,
		UserID:             row.UserID,
		Permissions:        auth.Permission(uint64(row.Scopes)) & auth.FullAccess,
		RateLimitPerMinute: RateLimitPerMinute,
		ClientID:           row.ClientID,
	}, nil
}

var _ auth.OAuthVerifier = (*Provider)(nil)
