package oauth_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/ory/fosite"
	"github.com/stretchr/testify/require"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
	"github.com/outflowhq/outflow/oauth"
)

// TestOAuthTablesAreTenantScoped proves row-level security isolates apps, grants and tokens per organization,
// keeps self-registered clients out of every organization's sight, and that the narrow lookups still find
// what the token endpoint and authentication need.
func TestOAuthTablesAreTenantScoped(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	q := dbq.New()
	alpha, err := accounts.Bootstrap(ctx, d.Pool, "alpha@example.com", "a long enough password", "alpha")
	require.NoError(t, err)
	beta, err := accounts.Bootstrap(ctx, d.Pool, "beta@example.com", "a long enough password", "beta")
	require.NoError(t, err)
	provider, err := oauth.NewProvider(d.Pool, auth.NewLimiter(d.Pool), "https://outflow.example", []byte(strings.Repeat("k", 32)))
	require.NoError(t, err)

	// Alpha develops an app; beta authorizes it, so beta holds the grant and its token.
	appID, grantID := uuid.New(), uuid.New()
	require.NoError(t, db.WithOrgTx(ctx, d.Pool, alpha.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		_, err := q.OAuthApplicationCreate(ctx, tx, dbq.OAuthApplicationCreateParams{
			ID: appID, OrganizationID: alpha.OrganizationID, ClientID: "ofc_alpha", ClientType: oauth.ClientPublic,
			TokenEndpointAuthMethod: oauth.AuthMethodNone, Name: "Alpha app", RedirectUris: []string{"https://alpha.example/cb"},
			GrantTypes: []string{"authorization_code", "refresh_token"}, Scopes: int64(auth.ReadContacts),
			AllowedWebhookDomains: []string{}, WebhookEvents: []string{}, WebhookSecretSealed: []byte("sealed"),
		})
		return err
	}))
	require.NoError(t, db.WithOrgTx(ctx, d.Pool, beta.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := q.OAuthGrantCreate(ctx, tx, dbq.OAuthGrantCreateParams{OrganizationID: beta.OrganizationID, ID: grantID,
			ClientID: appID, UserID: beta.UserID, Scopes: int64(auth.ReadContacts)}); err != nil {
			return err
		}
		return q.OAuthTokenCreate(ctx, tx, dbq.OAuthTokenCreateParams{OrganizationID: beta.OrganizationID, Signature: "sig-beta",
			Kind: "access_token", GrantID: grantID, Scopes: int64(auth.ReadContacts), Request: []byte(`{}`), ExpiresAt: time.Now().Add(time.Hour)})
	}))
	reg, err := provider.Register(ctx, oauth.Registration{RedirectURIs: []string{"http://127.0.0.1:5000/cb"}})
	require.NoError(t, err)

	count := func(tx pgx.Tx, table string) int {
		var n int
		require.NoError(t, tx.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n))
		return n
	}
	require.NoError(t, db.WithOrgTx(ctx, d.Pool, alpha.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		require.Equal(t, 1, count(tx, "oauth_clients"), "its own app only, not the self-registered client")
		require.Zero(t, count(tx, "oauth_grants"), "beta's grant of alpha's app is beta's")
		require.Zero(t, count(tx, "oauth_tokens"))
		_, err := tx.Exec(ctx, "SAVEPOINT s")
		require.NoError(t, err)
		_, err = q.OAuthGrantCreate(ctx, tx, dbq.OAuthGrantCreateParams{OrganizationID: beta.OrganizationID, ID: uuid.New(),
			ClientID: appID, UserID: alpha.UserID, Scopes: 1})
		var pgErr *pgconn.PgError
		require.ErrorAs(t, err, &pgErr)
		require.Equal(t, "42501", pgErr.Code, "a grant for another organization is refused")
		_, err = tx.Exec(ctx, "ROLLBACK TO SAVEPOINT s")
		return err
	}))
	require.NoError(t, db.WithOrgTx(ctx, d.Pool, beta.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		require.Zero(t, count(tx, "oauth_clients"), "beta sees no app of alpha's")
		require.Equal(t, 1, count(tx, "oauth_grants"))
		return nil
	}))

	// The lookups the token endpoint and authentication use find rows of any organization, and nothing more.
	store := provider.Store()
	c, err := store.Client(ctx, "ofc_alpha")
	require.NoError(t, err)
	require.Equal(t, appID, c.ID)
	c, err = store.Client(ctx, reg.Client.ClientID)
	require.NoError(t, err)
	require.True(t, c.SelfRegistered())
	require.Zero(t, c.AllowedScopes()&oauth.SelfRegisteredForbidden)
	_, err = store.Client(ctx, "ofc_unknown")
	require.ErrorIs(t, err, fosite.ErrNotFound)

	// A stored signature alone is not a token: the HMAC of the presented token must match.
	p, err := provider.VerifyAccessToken(ctx, "ory_at_forgedkey.sig-beta")
	require.NoError(t, err)
	require.Nil(t, p)
	p, err = provider.VerifyAccessToken(ctx, "ofk_not-an-oauth-token")
	require.NoError(t, err)
	require.Nil(t, p, "not ours: left to the other verifiers")

	// Revoking the grant by its id (fosite's request id) deletes its tokens, inside beta.
	require.NoError(t, store.RevokeGrant(ctx, grantID.String(), "test"))
	require.NoError(t, db.WithOrgTx(ctx, d.Pool, beta.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		require.Zero(t, count(tx, "oauth_tokens"))
		var revoked bool
		require.NoError(t, tx.QueryRow(ctx, "SELECT revoked_at IS NOT NULL FROM oauth_grants WHERE organization_id = $1 AND id = $2",
			beta.OrganizationID, grantID).Scan(&revoked))
		require.True(t, revoked)
		return nil
	}))
	require.ErrorIs(t, store.RevokeGrant(ctx, uuid.NewString(), "test"), fosite.ErrNotFound)
}
