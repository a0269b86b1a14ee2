package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/apierror"
	dbq "github.com/outflowhq/outflow/gen/db"
)

// errBadCredential is the one answer for every token that authenticates nothing; it never says which part
// was wrong, so a caller cannot probe for valid key ids.
var errBadCredential = apierror.Unauthorized("invalid_credential", "The bearer token is invalid, expired or revoked.")

// Authenticator resolves bearer tokens into principals.
type Authenticator struct {
	pool    *pgxpool.Pool
	queries *dbq.Queries
	now     func() time.Time
}

// NewAuthenticator builds the authenticator over the application pool.
func NewAuthenticator(pool *pgxpool.Pool) *Authenticator {
	return &Authenticator{pool: pool, queries: dbq.New(), now: time.Now}
}

// Authenticate verifies token and returns its principal, or an *apierror.Error (401) saying it is not valid.
func (a *Authenticator) Authenticate(ctx context.Context, token string) (*Principal, error) {
	if token == "" {
		return nil, apierror.Unauthorized("missing_credential", "Send a credential as `Authorization: Bearer <token>`.")
	}
	if IsAPIKey(token) {
		return a.apiKey(ctx, token)
	}
	return nil, errBadCredential
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
	// The lookup already matched on the hash; comparing again in constant time keeps the check independent of
	// how the database resolved it.
	if subtle.ConstantTimeCompare(key.KeyHash, hash) != 1 || key.Status != "active" {
		return nil, errBadCredential
	}
	if key.ExpiresAt != nil && !a.now().Before(*key.ExpiresAt) {
		return nil, errBadCredential
	}
	p := &Principal{
		Kind:           KindAPIKey,
		CredentialID:   key.ID,
		OrganizationID: key.OrganizationID,
		Permissions:    Permission(uint64(key.Permissions)),
	}
	if key.UserID.Valid {
		p.UserID = key.UserID.UUID
	}
	return p, nil
}
