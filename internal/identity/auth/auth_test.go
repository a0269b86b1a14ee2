package auth_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/identity/auth"
)

func TestPasswordHashing(t *testing.T) {
	t.Parallel()
	h := auth.HashPassword("correct horse battery staple")
	require.True(t, strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$"), h)
	require.NoError(t, auth.VerifyPassword(h, "correct horse battery staple"))
	require.ErrorIs(t, auth.VerifyPassword(h, "correct horse battery stapler"), auth.ErrPasswordMismatch)
	require.NotEqual(t, h, auth.HashPassword("correct horse battery staple"), "salted")

	for _, bad := range []string{"", "plain", "$argon2i$v=19$m=1,t=1,p=1$AA$AA", "$argon2id$v=19$m=x$AA$AA"} {
		require.Error(t, auth.VerifyPassword(bad, "x"), bad)
	}
}

func TestAPIKeyMinting(t *testing.T) {
	t.Parallel()
	k := auth.MintAPIKey()
	require.True(t, auth.IsAPIKey(k.Secret))
	require.True(t, strings.HasPrefix(k.Secret, auth.APIKeyPrefix))
	require.Equal(t, auth.HashAPIKey(k.Secret), k.Hash)
	require.Equal(t, k.Secret[:12], k.Prefix)
	require.Equal(t, k.Secret[len(k.Secret)-4:], k.Suffix)
	require.NotEqual(t, k.Secret, auth.MintAPIKey().Secret)
	require.False(t, auth.IsAPIKey("ofk_short"))
	require.False(t, auth.IsAPIKey("Bearer "+k.Secret))
}

func TestPermissions(t *testing.T) {
	t.Parallel()
	require.True(t, auth.FullAccess.Has(auth.ReadEmails|auth.ManageMailboxProvisioning))
	require.Equal(t, auth.Permission(1<<25-1), auth.FullAccess)
	require.False(t, (auth.ReadEmails | auth.ReadCampaigns).Has(auth.ReadEmails|auth.WriteEmails))
}
