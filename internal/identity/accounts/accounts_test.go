package accounts_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
)

func TestBootstrapIsIdempotentAndReplacesTheKey(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	authn := auth.NewAuthenticator(d.Pool, nil)

	first, err := accounts.Bootstrap(ctx, d.Pool, " Owner@Acme.Example ", "correct horse battery staple", "Acme")
	require.NoError(t, err)
	p, err := authn.Authenticate(ctx, first.APIKey)
	require.NoError(t, err)
	require.Equal(t, first.OrganizationID, p.OrganizationID)
	require.Equal(t, first.UserID, p.UserID)
	require.Equal(t, auth.FullAccess, p.Permissions)
	require.Equal(t, auth.KindAPIKey, p.Kind)

	second, err := accounts.Bootstrap(ctx, d.Pool, "owner@acme.example", "correct horse battery staple", "Acme")
	require.NoError(t, err)
	require.Equal(t, first.UserID, second.UserID)
	require.Equal(t, first.OrganizationID, second.OrganizationID)
	require.NotEqual(t, first.APIKey, second.APIKey)

	_, err = authn.Authenticate(ctx, first.APIKey)
	require.Error(t, err, "the replaced bootstrap key no longer authenticates")
	_, err = authn.Authenticate(ctx, second.APIKey)
	require.NoError(t, err)

	var users, orgs, owners int
	var email, reason string
	owner := d.OwnerPool(t)
	require.NoError(t, owner.QueryRow(ctx, "SELECT count(*), min(email) FROM users").Scan(&users, &email))
	require.NoError(t, owner.QueryRow(ctx, "SELECT count(*) FROM organizations").Scan(&orgs))
	require.NoError(t, owner.QueryRow(ctx, "SELECT count(*) FROM memberships WHERE role = 'owner'").Scan(&owners))
	require.NoError(t, owner.QueryRow(ctx, "SELECT revoked_reason FROM api_keys WHERE status = 'revoked'").Scan(&reason))
	require.Equal(t, []int{1, 1, 1}, []int{users, orgs, owners})
	require.Equal(t, "owner@acme.example", email)
	require.Equal(t, "replaced by admin bootstrap", reason)

	// The same owner asking for another organization gets a second one.
	other, err := accounts.Bootstrap(ctx, d.Pool, "owner@acme.example", "correct horse battery staple", "Acme Labs")
	require.NoError(t, err)
	require.Equal(t, first.UserID, other.UserID)
	require.NotEqual(t, first.OrganizationID, other.OrganizationID)
}

func TestBootstrapRefusesBadInput(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	_, err := accounts.Bootstrap(ctx, d.Pool, "owner@acme.example", "correct horse battery staple", "Acme")
	require.NoError(t, err)

	for _, tc := range []struct{ email, password, org, want string }{
		{"owner@acme.example", "another long password", "Acme", "password does not match"},
		{"not-an-email", "correct horse battery staple", "Acme", "not a valid email address"},
		{"Name <a@b.example>", "correct horse battery staple", "Acme", "not a valid email address"},
		{"a@b.example", "short", "Acme", "at least 10 characters"},
		{"a@b.example", "correct horse battery staple", "  ", "organization name must be 1 to 255"},
	} {
		_, err := accounts.Bootstrap(ctx, d.Pool, tc.email, tc.password, tc.org)
		require.ErrorContains(t, err, tc.want, tc)
	}
}
