package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
)

// errBadCredential is the one answer for every token that authenticates nothing; it never says which part
// was wrong, so a caller cannot probe for valid key ids.
var errBadCredential = apierror.InvalidToken("invalid_credential", "The bearer token is invalid, expired or revoked.")

// errIPNotAllowed answers a valid key used from an address outside its allow-list.
var errIPNotAllowed = apierror.Forbidden("ip_not_allowed", "This API key may not be used from this IP address.")

// OAuthVerifier resolves an OAuth access token into the principal of its grant; the OAuth server implements
// it. It answers (nil, nil) for a token it does not recognise.
type OAuthVerifier interface {
	VerifyAccessToken(ctx context.Context, token string) (*Principal, error)
}

// Authenticator resolves bearer tokens into principals.
type Authenticator struct {
	pool    *pgxpool.Pool
	signer  *TokenSigner
	oauth   OAuthVerifier
	limiter *Limiter
	queries *dbq.Queries
	now     func() time.Time
}

// SetOAuth makes the authenticator accept OAuth access tokens verified by v. The OAuth server is built after
// the authenticator (its consent page signs people in through it), hence a setter.
func (a *Authenticator) SetOAuth(v OAuthVerifier) { a.oauth = v }

// NewAuthenticator builds the authenticator over the application pool; signer verifies session tokens.
func NewAuthenticator(pool *pgxpool.Pool, signer *TokenSigner) *Authenticator {
	return &Authenticator{pool: pool, signer: signer, limiter: NewLimiter(pool), queries: dbq.New(), now: time.Now}
}

// Authenticate verifies token and returns its principal, or an *apierror.Error (401) saying it is not valid.
func (a *Authenticator) Authenticate(ctx context.Context, token string) (*Principal, error) {
	if token == "" {
		return nil, apierror.Unauthorized("missing_credential", "Send a credential as `Authorization: Bearer <token>`.")
	}
	if IsAPIKey(token) {
		return a.apiKey(ctx, token)
	}
	if IsJWT(token) && a.signer != nil {
		return a.session(ctx, token)
	}
	if a.oauth != nil {
		p, err := a.oauth.VerifyAccessToken(ctx, token)
		if err != nil {
			return nil, err
		}
		if p != nil {
			return p, nil
		}
	}
	return nil, errBadCredential
}

// session verifies a session access token, checks the session is still live (logout takes effect at once)
// and resolves the selected organization: the X-Organization-Id header, else the token's claim, else the
// user's most recent organization. The caller's role there sets their organization permissions.
func (a *Authenticator) session(ctx context.Context, token string) (*Principal, error) {
	claims, err := a.signer.Verify(ctx, token)
	if err != nil {
		if errors.Is(err, errBadToken) {
			return nil, errBadCredential
		}
		return nil, err
	}
	sess, err := a.queries.SessionGet(ctx, a.pool, claims.SessionID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errBadCredential
	}
	if err != nil {
		return nil, fmt.Errorf("load session: %w", err)
	}
	if sess.RevokedAt != nil || sess.UserID != claims.UserID || !a.now().Before(sess.RefreshExpiresAt) {
		return nil, errBadCredential
	}
	if a.now().Sub(sess.LastActiveAt) > time.Minute {
		// Activity is kept to the minute: most requests skip the write.
		_ = a.queries.SessionTouch(ctx, a.pool, sess.ID)
	}
	p := &Principal{Kind: KindSession, CredentialID: sess.ID, UserID: sess.UserID}

	want := claims.OrganizationID
	if hint := reqctx.From(ctx).Organization; hint != "" {
		id, err := uuid.Parse(hint)
		if err != nil {
			return nil, apierror.BadRequest("invalid_organization", "X-Organization-Id must be an organization id.")
		}
		want = id
	}
	memberships, err := a.queries.UserMemberships(ctx, a.pool, sess.UserID)
	if err != nil {
		return nil, fmt.Errorf("load memberships: %w", err)
	}
	for _, m := range memberships {
		if m.OrganizationID == want {
			p.OrganizationID, p.Role = m.OrganizationID, m.Role
		}
	}
	if p.OrganizationID == uuid.Nil && want != uuid.Nil && reqctx.From(ctx).Organization != "" {
		return nil, apierror.Forbidden("not_a_member", "You are not a member of that organization.")
	}
	if p.OrganizationID == uuid.Nil && len(memberships) > 0 && want == uuid.Nil {
		p.OrganizationID, p.Role = memberships[0].OrganizationID, memberships[0].Role
	}
	perms, builtin := BuiltinRolePermissions[p.Role]
	if !builtin && p.Role != "" {
		// A custom role (the role is its id): its current permission set, so a change applies at once.
		bits, err := a.queries.MemberCustomRolePermissions(ctx, a.pool, dbq.MemberCustomRolePermissionsParams{
			OrganizationID: p.OrganizationID, UserID: p.UserID})
		if err != nil {
			return nil, fmt.Errorf("load custom role: %w", err)
		}
		perms = OrgPermission(bits) & AllOrgPermissions
	}
	p.OrgPermissions = perms
	return p, nil
}

func (a *Authenticator) apiKey(ctx context.Context, secret string) (*Principal, error) {
	hash := HashAPIKey(secret)
	key, err := a.queries.APIKeyLookup(ctx, a.pool, hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errBadCredential
	}
	if err != nil {
		return nil, fmt.Errorf("look up API key: %w", err)
	}
	return a.keyPrincipal(ctx, key, hash)
}

// Admit is Authenticate for a request about to be served: it also counts the request against the
// credential's per-minute budget and answers 429 with Retry-After once it is spent. For an API key, the
// lookup and the count share one round trip to Postgres; sessions are not limited.
func (a *Authenticator) Admit(ctx context.Context, token string) (*Principal, error) {
	if !IsAPIKey(token) {
		p, err := a.Authenticate(ctx, token)
		if err != nil {
			return nil, err
		}
		if err := a.limiter.Take(ctx, p); err != nil {
			return nil, err
		}
		return p, nil
	}
	hash := HashAPIKey(token)
	args := dbq.APIKeyAdmitParams{KeyHash: hash, DefaultLimit: DefaultRateLimitPerMinute}
	if addr, err := netip.ParseAddr(reqctx.From(ctx).ClientIP); err == nil {
		addr = addr.Unmap().WithZone("")
		args.Ip = &addr
	}
	row, err := a.queries.APIKeyAdmit(ctx, a.pool, args)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errBadCredential
	}
	if err != nil {
		return nil, fmt.Errorf("admit API key: %w", err)
	}
	p, err := a.keyPrincipal(ctx, dbq.ApiKey{
		OrganizationID: row.OrganizationID, ID: row.ID, UserID: row.UserID, KeyHash: row.KeyHash,
		Permissions: row.Permissions, Status: row.Status, ExpiresAt: row.ExpiresAt, AllowedIps: row.AllowedIps,
		AllowedEmailAccounts: row.AllowedEmailAccounts, RateLimitPerMinute: row.RateLimitPerMinute,
	}, hash)
	if err != nil {
		return nil, err
	}
	switch {
	case row.RetryAfter > 0:
		return nil, rateLimited(p, int(row.RetryAfter))
	case row.RetryAfter < 0:
		// Postgres and this process judged expiry a moment apart: count the request on its own.
		if err := a.limiter.Take(ctx, p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// keyPrincipal checks a looked-up key (hash, status, expiry, source address) and returns its principal.
func (a *Authenticator) keyPrincipal(ctx context.Context, key dbq.ApiKey, hash []byte) (*Principal, error) {
	// The lookup already matched on the hash; comparing again in constant time keeps the check independent of
	// how the database resolved it.
	if subtle.ConstantTimeCompare(key.KeyHash, hash) != 1 || key.Status != "active" {
		return nil, errBadCredential
	}
	if key.ExpiresAt != nil && !a.now().Before(*key.ExpiresAt) {
		return nil, errBadCredential
	}
	if !ipAllowed(key.AllowedIps, reqctx.From(ctx).ClientIP) {
		return nil, errIPNotAllowed
	}
	p := &Principal{
		Kind:               KindAPIKey,
		CredentialID:       key.ID,
		OrganizationID:     key.OrganizationID,
		Permissions:        Permission(uint64(key.Permissions)),
		RateLimitPerMinute: EffectiveRateLimit(int(key.RateLimitPerMinute)),
	}
	if len(key.AllowedEmailAccounts) > 0 {
		p.AllowedMailboxes = key.AllowedEmailAccounts
	}
	if key.UserID.Valid {
		p.UserID = key.UserID.UUID
	}
	return p, nil
}
