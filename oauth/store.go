package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/ory/fosite"
	"github.com/ory/fosite/handler/oauth2"
	"github.com/ory/fosite/handler/pkce"
	"github.com/ory/fosite/storage"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// Token kinds of the oauth_tokens table.
const (
	kindAuthorizeCode = "authorize_code"
	kindAccessToken   = "access_token"
	kindRefreshToken  = "refresh_token"
	kindPKCE          = "pkce"
)

// Store is fosite's storage over Postgres. Codes, tokens and PKCE sessions are rows of oauth_tokens keyed by
// signature; the fosite request id of every one of them is the grant id. Reads that know no organization go
// through the SECURITY DEFINER lookups; every write runs inside the organization of the row it touches, so
// row-level security checks it.
type Store struct {
	pool    *pgxpool.Pool
	queries *dbq.Queries
}

// The interfaces the composed factories assert at run time (compose panics on a missing method), checked
// here at compile time.
var (
	_ fosite.Storage                = (*Store)(nil)
	_ fosite.ClientManager          = (*Store)(nil)
	_ oauth2.CoreStorage            = (*Store)(nil)
	_ oauth2.AuthorizeCodeStorage   = (*Store)(nil)
	_ oauth2.AccessTokenStorage     = (*Store)(nil)
	_ oauth2.RefreshTokenStorage    = (*Store)(nil)
	_ oauth2.TokenRevocationStorage = (*Store)(nil)
	_ pkce.PKCERequestStorage       = (*Store)(nil)
	_ storage.Transactional         = (*Store)(nil)
)

// NewStore builds the store over the application pool.
func NewStore(pool *pgxpool.Pool) *Store {
	return &Store{pool: pool, queries: dbq.New()}
}

// --- transactions

// txHolder is the transaction the store runs in for the rest of a context: one fosite opened (owned), or one
// a caller lent with WithTx.
type txHolder struct {
	tx    pgx.Tx
	owned bool
	done  bool
}

type txKey struct{}

// openTxs records the transactions fosite opened while serving one request (see Guard).
type openTxs struct {
	mu  sync.Mutex
	txs []*txHolder
}

type openTxsKey struct{}

// WithTx makes the store run inside tx, which the caller commits or rolls back: the consent page issues the
// authorization code in the transaction that creates the grant.
func (s *Store) WithTx(ctx context.Context, tx pgx.Tx) context.Context {
	return context.WithValue(ctx, txKey{}, &txHolder{tx: tx})
}

// Guard returns ctx prepared for one fosite call and a release function that rolls back any transaction
// fosite opened and did not end. fosite ends its transactions on every path today; the guard keeps a future
// path that forgets from pinning a pooled connection.
func (s *Store) Guard(ctx context.Context) (context.Context, func()) {
	open := &openTxs{}
	return context.WithValue(ctx, openTxsKey{}, open), func() {
		open.mu.Lock()
		defer open.mu.Unlock()
		for _, h := range open.txs {
			if !h.done {
				h.done = true
				_ = h.tx.Rollback(context.WithoutCancel(ctx))
			}
		}
	}
}

func activeTx(ctx context.Context) *txHolder {
	if h, ok := ctx.Value(txKey{}).(*txHolder); ok && !h.done {
		return h
	}
	return nil
}

// BeginTX starts the transaction fosite wants for a token exchange; inside a lent transaction it borrows that
// one instead, and Commit and Rollback leave it to its owner.
func (s *Store) BeginTX(ctx context.Context) (context.Context, error) {
	if h := activeTx(ctx); h != nil {
		return context.WithValue(ctx, txKey{}, &txHolder{tx: h.tx}), nil
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return ctx, fmt.Errorf("oauth store: begin: %w", err)
	}
	h := &txHolder{tx: tx, owned: true}
	if open, ok := ctx.Value(openTxsKey{}).(*openTxs); ok {
		open.mu.Lock()
		open.txs = append(open.txs, h)
		open.mu.Unlock()
	}
	return context.WithValue(ctx, txKey{}, h), nil
}

var errNoTx = errors.New("oauth store: no transaction in context")

// Commit commits the transaction BeginTX started.
func (s *Store) Commit(ctx context.Context) error {
	h, ok := ctx.Value(txKey{}).(*txHolder)
	if !ok {
		return errNoTx
	}
	if !h.owned || h.done {
		return nil
	}
	h.done = true
	return h.tx.Commit(ctx)
}

// Rollback rolls back the transaction BeginTX started.
func (s *Store) Rollback(ctx context.Context) error {
	h, ok := ctx.Value(txKey{}).(*txHolder)
	if !ok {
		return errNoTx
	}
	if !h.owned || h.done {
		return nil
	}
	h.done = true
	return h.tx.Rollback(context.WithoutCancel(ctx))
}

// reader is what reads run on: the context's transaction, else the pool.
func (s *Store) reader(ctx context.Context) dbq.DBTX {
	if h := activeTx(ctx); h != nil {
		return h.tx
	}
	return s.pool
}

// inOrg runs fn scoped to org: as a savepoint of the context's transaction, else in a transaction of its own.
func (s *Store) inOrg(ctx context.Context, org uuid.UUID, fn func(ctx context.Context, tx pgx.Tx) error) error {
	var b db.Beginner = s.pool
	if h := activeTx(ctx); h != nil {
		b = h.tx
	}
	return db.WithOrgTx(ctx, b, org, fn)
}

// --- clients

// GetClient loads a client by its public client_id; an unknown one is fosite.ErrNotFound.
func (s *Store) GetClient(ctx context.Context, id string) (fosite.Client, error) {
	return s.Client(ctx, id)
}

// Client is GetClient with the concrete type.
func (s *Store) Client(ctx context.Context, id string) (*Client, error) {
	if id == "" || len(id) > 100 {
		return nil, fosite.ErrNotFound
	}
	row, err := s.queries.OAuthClientLookup(ctx, s.reader(ctx), id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fosite.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("oauth store: client: %w", err)
	}
	return &Client{OauthClient: row}, nil
}

// ClientAssertionJWTValid is part of fosite.ClientManager; JWT client assertions (RFC 7523) are not
// accepted here, so no assertion id is ever known.
func (s *Store) ClientAssertionJWTValid(context.Context, string) error { return nil }

// SetClientAssertionJWT is part of fosite.ClientManager; see ClientAssertionJWTValid.
func (s *Store) SetClientAssertionJWT(context.Context, string, time.Time) error { return nil }

// --- serialized requests

// storedRequest is a fosite request as a row keeps it.
type storedRequest struct {
	ID                string     `json:"id"`
	RequestedAt       time.Time  `json:"requested_at"`
	ClientID          string     `json:"client_id"`
	RequestedScopes   []string   `json:"requested_scopes"`
	GrantedScopes     []string   `json:"granted_scopes"`
	RequestedAudience []string   `json:"requested_audience"`
	GrantedAudience   []string   `json:"granted_audience"`
	Form              url.Values `json:"form"`
	Session           *Session   `json:"session"`
}

// create stores req under signature as a token of kind, expiring at what its session says for tokenType.
func (s *Store) create(ctx context.Context, kind, signature string, tokenType fosite.TokenType, fallback time.Duration, req fosite.Requester) error {
	sess, ok := req.GetSession().(*Session)
	if !ok || sess == nil || sess.GrantID == uuid.Nil || sess.OrganizationID == uuid.Nil {
		return fmt.Errorf("oauth store: %s without a grant session", kind)
	}
	grantID, err := uuid.Parse(req.GetID())
	if err != nil || grantID != sess.GrantID {
		return fmt.Errorf("oauth store: %s request id %q is not its grant", kind, req.GetID())
	}
	expires := sess.GetExpiresAt(tokenType)
	if expires.IsZero() {
		expires = time.Now().Add(fallback)
	}
	body, err := json.Marshal(storedRequest{
		ID: req.GetID(), RequestedAt: req.GetRequestedAt(), ClientID: req.GetClient().GetID(),
		RequestedScopes: req.GetRequestedScopes(), GrantedScopes: req.GetGrantedScopes(),
		RequestedAudience: req.GetRequestedAudience(), GrantedAudience: req.GetGrantedAudience(),
		Form: req.GetRequestForm(), Session: sess,
	})
	if err != nil {
		return fmt.Errorf("oauth store: encode request: %w", err)
	}
	scopes, _ := ParseScopeNames(req.GetGrantedScopes())
	return s.inOrg(ctx, sess.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		return s.queries.OAuthTokenCreate(ctx, tx, dbq.OAuthTokenCreateParams{
			OrganizationID: sess.OrganizationID, Signature: signature, Kind: kind, GrantID: grantID,
			Scopes: int64(scopes), Request: body, ExpiresAt: expires,
		})
	})
}

// lookup finds the row of kind under signature; fosite.ErrNotFound when there is none.
func (s *Store) lookup(ctx context.Context, kind, signature string) (dbq.OauthToken, error) {
	row, err := s.queries.OAuthTokenLookup(ctx, s.reader(ctx), dbq.OAuthTokenLookupParams{Kind: kind, Signature: signature})
	if errors.Is(err, pgx.ErrNoRows) {
		return row, fosite.ErrNotFound
	}
	if err != nil {
		return row, fmt.Errorf("oauth store: lookup %s: %w", kind, err)
	}
	return row, nil
}

// get rebuilds the fosite request of the row of kind under signature. An inactive row (a redeemed code, a
// rotated refresh token) comes back together with inactive, as fosite's replay detection needs it.
func (s *Store) get(ctx context.Context, kind, signature string, inactive error) (fosite.Requester, error) {
	row, err := s.lookup(ctx, kind, signature)
	if err != nil {
		return nil, err
	}
	var st storedRequest
	if err := json.Unmarshal(row.Request, &st); err != nil {
		return nil, fmt.Errorf("oauth store: decode request: %w", err)
	}
	client, err := s.Client(ctx, st.ClientID)
	if err != nil {
		// The app is gone: its grants and tokens went with it, this row only outlived it by a moment.
		return nil, fosite.ErrNotFound
	}
	// Narrowing an app's scopes narrows its existing grants at once: a refreshed token never carries a scope
	// the app no longer has.
	allowed := client.GetScopes()
	granted := make(fosite.Arguments, 0, len(st.GrantedScopes))
	for _, sc := range st.GrantedScopes {
		if allowed.Has(sc) {
			granted = append(granted, sc)
		}
	}
	sess := st.Session
	if sess == nil {
		sess = &Session{}
	}
	req := &fosite.Request{
		ID: st.ID, RequestedAt: st.RequestedAt, Client: client,
		RequestedScope: st.RequestedScopes, GrantedScope: granted,
		RequestedAudience: st.RequestedAudience, GrantedAudience: st.GrantedAudience,
		Form: st.Form, Session: sess,
	}
	if req.Form == nil {
		req.Form = url.Values{}
	}
	if !row.Active {
		return req, inactive
	}
	return req, nil
}

// errAlreadyRedeemed is a code that a concurrent redemption redeemed first; the token endpoint answers it as
// invalid_grant.
var errAlreadyRedeemed = errors.New("oauth store: the authorization code was redeemed concurrently")

// deactivate marks the row of kind under signature used; errAlreadyRedeemed when it was not active any more.
func (s *Store) deactivate(ctx context.Context, kind, signature string) error {
	row, err := s.lookup(ctx, kind, signature)
	if err != nil {
		return err
	}
	return s.inOrg(ctx, row.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		n, err := s.queries.OAuthTokenDeactivate(ctx, tx, dbq.OAuthTokenDeactivateParams{
			OrganizationID: row.OrganizationID, Signature: signature, Kind: kind})
		if err != nil {
			return err
		}
		if n == 0 {
			return errAlreadyRedeemed
		}
		return nil
	})
}

// remove deletes the row of kind under signature; a row that is already gone is not an error.
func (s *Store) remove(ctx context.Context, kind, signature string) error {
	row, err := s.lookup(ctx, kind, signature)
	if errors.Is(err, fosite.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.inOrg(ctx, row.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		return s.queries.OAuthTokenDelete(ctx, tx, dbq.OAuthTokenDeleteParams{
			OrganizationID: row.OrganizationID, Signature: signature, Kind: kind})
	})
}

// --- authorization codes

// CreateAuthorizeCodeSession stores a new authorization code.
func (s *Store) CreateAuthorizeCodeSession(ctx context.Context, signature string, req fosite.Requester) error {
	return s.create(ctx, kindAuthorizeCode, signature, fosite.AuthorizeCode, AuthorizeCodeLifespan, req)
}

// GetAuthorizeCodeSession returns the request of a code; a redeemed code comes back with
// fosite.ErrInvalidatedAuthorizeCode so fosite can revoke what it was exchanged for.
func (s *Store) GetAuthorizeCodeSession(ctx context.Context, signature string, _ fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, kindAuthorizeCode, signature, fosite.ErrInvalidatedAuthorizeCode)
}

// InvalidateAuthorizeCodeSession marks a code redeemed; of two concurrent redemptions only one succeeds.
func (s *Store) InvalidateAuthorizeCodeSession(ctx context.Context, signature string) error {
	return s.deactivate(ctx, kindAuthorizeCode, signature)
}

// --- PKCE

// CreatePKCERequestSession stores the code challenge of a code.
func (s *Store) CreatePKCERequestSession(ctx context.Context, signature string, req fosite.Requester) error {
	return s.create(ctx, kindPKCE, signature, fosite.AuthorizeCode, AuthorizeCodeLifespan, req)
}

// GetPKCERequestSession returns the code challenge of a code.
func (s *Store) GetPKCERequestSession(ctx context.Context, signature string, _ fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, kindPKCE, signature, fosite.ErrNotFound)
}

// DeletePKCERequestSession removes a code challenge: it is checked once, right or wrong.
func (s *Store) DeletePKCERequestSession(ctx context.Context, signature string) error {
	return s.remove(ctx, kindPKCE, signature)
}

// --- access tokens

// CreateAccessTokenSession stores a new access token's signature.
func (s *Store) CreateAccessTokenSession(ctx context.Context, signature string, req fosite.Requester) error {
	return s.create(ctx, kindAccessToken, signature, fosite.AccessToken, AccessTokenLifespan, req)
}

// GetAccessTokenSession returns the request of an access token.
func (s *Store) GetAccessTokenSession(ctx context.Context, signature string, _ fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, kindAccessToken, signature, fosite.ErrInactiveToken)
}

// DeleteAccessTokenSession removes an access token.
func (s *Store) DeleteAccessTokenSession(ctx context.Context, signature string) error {
	return s.remove(ctx, kindAccessToken, signature)
}

// --- refresh tokens

// CreateRefreshTokenSession stores a new refresh token's signature.
func (s *Store) CreateRefreshTokenSession(ctx context.Context, signature, _ string, req fosite.Requester) error {
	return s.create(ctx, kindRefreshToken, signature, fosite.RefreshToken, RefreshTokenLifespan, req)
}

// GetRefreshTokenSession returns the request of a refresh token; a rotated one comes back with
// fosite.ErrInactiveToken, which is how fosite detects reuse.
func (s *Store) GetRefreshTokenSession(ctx context.Context, signature string, _ fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, kindRefreshToken, signature, fosite.ErrInactiveToken)
}

// DeleteRefreshTokenSession removes a refresh token.
func (s *Store) DeleteRefreshTokenSession(ctx context.Context, signature string) error {
	return s.remove(ctx, kindRefreshToken, signature)
}

// RotateRefreshToken retires the presented refresh token (kept, inactive, so presenting it again is detected
// as reuse) and the access tokens issued before it; fosite then stores the new pair. A token a concurrent
// refresh already rotated answers fosite.ErrNotFound, which fosite turns into "retry".
func (s *Store) RotateRefreshToken(ctx context.Context, requestID, signature string) error {
	row, err := s.lookup(ctx, kindRefreshToken, signature)
	if err != nil {
		return err
	}
	if row.GrantID.String() != requestID {
		return fosite.ErrNotFound
	}
	return s.inOrg(ctx, row.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		n, err := s.queries.OAuthTokenDeactivate(ctx, tx, dbq.OAuthTokenDeactivateParams{
			OrganizationID: row.OrganizationID, Signature: signature, Kind: kindRefreshToken})
		if err != nil {
			return err
		}
		if n == 0 {
			return fosite.ErrNotFound
		}
		access := kindAccessToken
		return s.queries.OAuthTokenDeleteByGrant(ctx, tx, dbq.OAuthTokenDeleteByGrantParams{
			OrganizationID: row.OrganizationID, GrantID: row.GrantID, Kind: &access})
	})
}

// --- revocation

// RevokeRefreshToken revokes the grant behind a request: fosite calls it (and RevokeAccessToken) on
// revocation, on refresh token reuse and on authorization code replay, and in each case the whole grant ends.
func (s *Store) RevokeRefreshToken(ctx context.Context, requestID string) error {
	return s.RevokeGrant(ctx, requestID, "revoked")
}

// RevokeAccessToken revokes the grant behind a request; see RevokeRefreshToken.
func (s *Store) RevokeAccessToken(ctx context.Context, requestID string) error {
	return s.RevokeGrant(ctx, requestID, "revoked")
}

// revocationReason lets the caller of a fosite operation name why a grant ends (reuse, replay) for the audit
// log; fosite's storage calls carry no reason.
type revocationReasonKey struct{}

// WithRevocationReason returns ctx naming reason as the cause of any grant revoked under it.
func WithRevocationReason(ctx context.Context, reason string) context.Context {
	return context.WithValue(ctx, revocationReasonKey{}, reason)
}

// RevokeGrant ends a grant: it stops authenticating and every code, token and PKCE session of it is deleted.
// The first revocation writes the audit entry; revoking again changes nothing. An unknown grant is
// fosite.ErrNotFound.
func (s *Store) RevokeGrant(ctx context.Context, requestID, reason string) error {
	grantID, err := uuid.Parse(requestID)
	if err != nil {
		return fosite.ErrNotFound
	}
	if r, ok := ctx.Value(revocationReasonKey{}).(string); ok && r != "" {
		reason = r
	}
	org, err := s.queries.OAuthGrantOrganization(ctx, s.reader(ctx), grantID)
	if errors.Is(err, pgx.ErrNoRows) {
		return fosite.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("oauth store: grant organization: %w", err)
	}
	// The app acts here (it presented the token), so the audit entry names its grant as the actor.
	actx := auth.WithPrincipal(ctx, &auth.Principal{Kind: auth.KindOAuth, CredentialID: grantID, OrganizationID: org})
	return s.inOrg(actx, org, func(ctx context.Context, tx pgx.Tx) error {
		return revokeGrantTx(ctx, tx, s.queries, org, grantID, reason)
	})
}

// revokeGrantTx revokes one grant inside its organization's transaction and audits the first revocation.
func revokeGrantTx(ctx context.Context, tx pgx.Tx, q *dbq.Queries, org, grantID uuid.UUID, reason string) error {
	g, err := q.OAuthGrantRevoke(ctx, tx, dbq.OAuthGrantRevokeParams{OrganizationID: org, ID: grantID, Reason: reason})
	if errors.Is(err, pgx.ErrNoRows) {
		// Already revoked: nothing of it may remain usable.
		return q.OAuthTokenDeleteByGrant(ctx, tx, dbq.OAuthTokenDeleteByGrantParams{OrganizationID: org, GrantID: grantID})
	}
	if err != nil {
		return err
	}
	if err := q.OAuthTokenDeleteByGrant(ctx, tx, dbq.OAuthTokenDeleteByGrantParams{OrganizationID: org, GrantID: grantID}); err != nil {
		return err
	}
	// The app's managed webhook endpoint in the organization ends with its grant (the live one: only a live
	// grant is revoked here).
	removed, err := q.WebhookEndpointDeleteManaged(ctx, tx, dbq.WebhookEndpointDeleteManagedParams{OrganizationID: org, OauthClientID: g.ClientID})
	if err != nil {
		return err
	}
	meta := map[string]any{"reason": reason, "client": g.ClientID.String()}
	if len(removed) > 0 {
		meta["webhook_endpoint_removed"] = removed[0].String()
	}
	return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionRevoke, Event: "oauth_grant.revoked", EntityType: audit.EntityOAuthGrant,
		EntityID: grantID.String(), Metadata: meta})
}
