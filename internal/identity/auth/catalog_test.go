package auth_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/identity/auth"
)

func TestCatalogListsEveryBitInOrder(t *testing.T) {
	t.Parallel()
	var all auth.Permission
	for i, e := range auth.Catalog {
		require.Equal(t, auth.Permission(1)<<i, e.Permission, e.Name)
		require.NotEmpty(t, e.Description)
		require.Contains(t, []auth.Category{auth.CategoryRead, auth.CategoryWrite, auth.CategoryBulk, auth.CategorySpecial}, e.Category)
		all |= e.Permission
	}
	require.Equal(t, auth.FullAccess, all)
	require.True(t, auth.FullAccess.Has(auth.ReadOnly))
	require.False(t, auth.ReadOnly.Has(auth.WriteContacts))
	require.True(t, auth.ReadOnly.Has(auth.ReadContacts|auth.ReadAuditLogs))
	require.True(t, auth.FullAccess.Valid())
	require.False(t, (auth.FullAccess + 1).Valid())
}

func TestScopeNames(t *testing.T) {
	t.Parallel()
	p := auth.ReadCampaigns | auth.WriteContacts
	require.Equal(t, []string{"READ_CAMPAIGNS", "WRITE_CONTACTS"}, p.Names())
	require.Equal(t, []string{"read_campaigns", "write_contacts"}, p.Scopes())
	back, err := auth.ParseScopes([]string{"write_contacts", "READ_CAMPAIGNS"})
	require.NoError(t, err)
	require.Equal(t, p, back)
	_, err = auth.ParseScopes([]string{"read_everything"})
	require.ErrorContains(t, err, "read_everything")
}

func TestNormalizeAllowedIPs(t *testing.T) {
	t.Parallel()
	got, err := auth.NormalizeAllowedIPs([]string{"203.0.113.7", "10.1.2.3/8", "::ffff:192.0.2.1", "2001:db8::1/32", "10.0.0.0/8", "::ffff:10.0.0.0/104"})
	require.NoError(t, err)
	require.Equal(t, []string{"203.0.113.7/32", "10.0.0.0/8", "192.0.2.1/32", "2001:db8::/32"}, got)
	for _, bad := range []string{"", "10.0.0.256", "10.0.0.0/33", "example.com", "::ffff:0:0/8"} {
		_, err := auth.NormalizeAllowedIPs([]string{bad})
		require.Error(t, err, bad)
	}
	many := make([]string, auth.MaxAllowedIPs+1)
	for i := range many {
		many[i] = "192.0.2.1"
	}
	_, err = auth.NormalizeAllowedIPs(many)
	require.Error(t, err)
}
