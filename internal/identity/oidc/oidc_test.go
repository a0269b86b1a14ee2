package oidc

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/testkit/oidctest"
)

// clock is a settable now for the provider's caches.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func setup(t *testing.T) (*oidctest.Provider, *Provider, *clock) {
	t.Helper()
	idp := oidctest.New(t, oidctest.Options{ClientID: "client", ClientSecret: "secret"})
	p := New(Config{Issuer: idp.Issuer, ClientID: "client", ClientSecret: "secret"})
	c := &clock{t: time.Now()}
	p.now = c.now
	return idp, p, c
}

var ada = oidctest.User{Subject: "ada", Email: "Ada@Example.com", EmailVerified: true, GivenName: "Ada", FamilyName: "Lovelace"}

func TestVerifyReturnsTheIdentity(t *testing.T) {
	t.Parallel()
	idp, p, _ := setup(t)
	claims := idp.ClaimsFor(ada)
	claims["nonce"] = "n-1"
	id, err := p.Verify(context.Background(), idp.Sign(t, claims), "n-1")
	require.NoError(t, err)
	require.Equal(t, Identity{Subject: "ada", Email: "ada@example.com", EmailVerified: true, GivenName: "Ada", FamilyName: "Lovelace"}, id)

	_, err = p.Verify(context.Background(), idp.Sign(t, claims), "n-2")
	require.ErrorIs(t, err, ErrRejected)

	// Apple sends email_verified as a string.
	claims["email_verified"] = "false"
	id, err = p.Verify(context.Background(), idp.Sign(t, claims), "")
	require.NoError(t, err)
	require.False(t, id.EmailVerified)
	claims["email_verified"] = "maybe"
	_, err = p.Verify(context.Background(), idp.Sign(t, claims), "")
	require.ErrorIs(t, err, ErrRejected)
}

func TestKeyRotationIsPickedUpWithoutHammeringTheProvider(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	idp, p, clk := setup(t)
	old := idp.Sign(t, idp.ClaimsFor(ada))
	_, err := p.Verify(ctx, old, "")
	require.NoError(t, err)

	idp.RotateKey(t)
	rotated := idp.Sign(t, idp.ClaimsFor(ada))
	// The key set was fetched a moment ago: an unknown key id does not trigger another fetch yet...
	_, err = p.Verify(ctx, rotated, "")
	require.ErrorIs(t, err, ErrRejected)
	// ...but does once the refetch interval has passed.
	clk.t = clk.t.Add(keyRefetchInterval + time.Second)
	_, err = p.Verify(ctx, rotated, "")
	require.NoError(t, err)
	_, err = p.Verify(ctx, old, "")
	require.NoError(t, err, "the old key stays published")
}

func TestCachedKeysKeepVerifyingWhileTheProviderIsDown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	idp, p, clk := setup(t)
	claims := idp.ClaimsFor(ada)
	claims["exp"] = clk.t.Add(3 * time.Hour).Unix()
	token := idp.Sign(t, claims)
	_, err := p.Verify(ctx, token, "")
	require.NoError(t, err)
	idp.GoDown()
	clk.t = clk.t.Add(keysTTL + time.Minute)
	_, err = p.Verify(ctx, token, "")
	require.NoError(t, err)

	// A key the cache does not hold cannot be checked: unavailable, not rejected.
	idp.RotateKey(t)
	_, err = p.Verify(ctx, idp.Sign(t, claims), "")
	require.ErrorIs(t, err, ErrUnavailable)
}

func TestDiscoveryMustNameTheConfiguredIssuer(t *testing.T) {
	t.Parallel()
	idp := oidctest.New(t, oidctest.Options{ClientID: "client"})
	p := New(Config{Issuer: strings.Replace(idp.Issuer, "127.0.0.1", "localhost", 1), ClientID: "client"})
	_, err := p.Metadata(context.Background())
	require.ErrorIs(t, err, ErrUnavailable)
	require.Contains(t, err.Error(), "names issuer")
}

func TestEndpointsMustBeHTTPSOffLoopback(t *testing.T) {
	t.Parallel()
	for raw, ok := range map[string]bool{
		"https://accounts.google.com":       true,
		"http://127.0.0.1:8080/token":       true,
		"http://localhost/jwks":             true,
		"http://[::1]:9000/authorize":       true,
		"http://idp.example/token":          false,
		"https://user:pw@idp.example/token": false,
		"ftp://idp.example/token":           false,
		"/relative":                         false,
	} {
		_, err := checkEndpoint(raw)
		require.Equal(t, ok, err == nil, raw)
	}
}

func TestClientRefusesLinkLocalAddresses(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/", "http://0.0.0.0/"} {
		_, err := NewHTTPClient().Get(target)
		require.Error(t, err, target)
		require.Contains(t, err.Error(), "refusing to connect", target)
	}
}

func TestTokenEndpointRefusalIsRejected(t *testing.T) {
	t.Parallel()
	idp, p, _ := setup(t)
	_, err := p.Redeem(context.Background(), "no-such-code", idp.Issuer+"/cb", "verifier", "nonce")
	require.ErrorIs(t, err, ErrRejected)
	require.False(t, errors.Is(err, ErrUnavailable))
}
