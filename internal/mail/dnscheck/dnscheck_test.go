package dnscheck_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/audience/verify"
	"github.com/outflowhq/outflow/internal/mail/dnscheck"
	"github.com/outflowhq/outflow/internal/testkit/verifytest"
)

func TestNormalizeTrackingDomain(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"https://Track.Example.com/path?x=1": "track.example.com",
		"track.acme.io.":                     "track.acme.io",
		"  HTTP://links.acme.io  ":           "links.acme.io",
		"":                                   "",
	} {
		got, reason := dnscheck.NormalizeTrackingDomain(raw)
		require.Empty(t, reason, raw)
		require.Equal(t, want, got, raw)
	}
	for _, raw := range []string{"203.0.113.7", "[2001:db8::1]", "track.acme.io:8080", "localhost", "app.localhost",
		"intranet", "bad_label.acme.io", "-x.acme.io"} {
		got, reason := dnscheck.NormalizeTrackingDomain(raw)
		require.Empty(t, got, raw)
		require.NotEmpty(t, reason, raw)
	}
}

func TestCheckTracking(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := verifytest.NewDNS(t)
	r := verify.NewResolver(d.Addr)
	d.A("t.outflow.dev", "198.51.100.10")
	d.CNAME("track.acme.io", "t.outflow.dev")
	d.CNAME("links.acme.io", "elsewhere.example.net")
	d.A("elsewhere.example.net", "198.51.100.99")
	d.A("flat.acme.io", "198.51.100.10")
	d.A("other.acme.io", "203.0.113.5")
	d.ServFail("broken.acme.io")
	d.CNAME("early.acme.io", "t2.outflow.dev")

	for domain, want := range map[string]dnscheck.TrackingResult{
		"track.acme.io":   {Status: dnscheck.TrackingVerified},
		"flat.acme.io":    {Status: dnscheck.TrackingVerified},
		"links.acme.io":   {Status: dnscheck.TrackingWrongTarget, Observed: "elsewhere.example.net"},
		"other.acme.io":   {Status: dnscheck.TrackingWrongTarget, Observed: "203.0.113.5"},
		"nothing.acme.io": {Status: dnscheck.TrackingNotFound},
		"broken.acme.io":  {Status: dnscheck.TrackingLookupError},
		"":                {Status: dnscheck.TrackingUnset},
	} {
		got := dnscheck.CheckTracking(ctx, r, domain, "t.outflow.dev")
		require.Equal(t, want.Status, got.Status, domain)
		require.Equal(t, want.Observed, got.Observed, domain)
		require.NotEmpty(t, got.Message, domain)
		require.False(t, got.HostUnresolvable, domain)
	}
	require.Equal(t, dnscheck.TrackingNoTarget, dnscheck.CheckTracking(ctx, r, "track.acme.io", "").Status)
	// The record is right, but the deployment's own host has no address yet.
	got := dnscheck.CheckTracking(ctx, r, "early.acme.io", "t2.outflow.dev")
	require.Equal(t, dnscheck.TrackingVerified, got.Status)
	require.True(t, got.HostUnresolvable)
}

func TestCheckAuth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := verifytest.NewDNS(t)
	r := verify.NewResolver(d.Addr)
	d.TXT("acme.io", "google-site-verification=abc")
	d.TXT("acme.io", "v=spf1 include:_spf.google.com ~all")
	d.TXT("_dmarc.acme.io", "v=DMARC1; p=quarantine; rua=mailto:d@acme.io")
	d.TXT("google._domainkey.acme.io", "v=DKIM1; k=rsa; p=MIIBIjANBgkq")
	d.TXT("s1._domainkey.acme.io", "v=DKIM1; k=rsa; p=MIIBIjANBgkr")
	// A subdomain without its own DMARC inherits the organizational domain's.
	d.TXT("mail.acme.io", "v=spf1 -all")
	// SPF only.
	d.TXT("halfway.dev", "v=spf1 mx -all")
	d.ServFail("_dmarc.flaky.dev")
	d.TXT("flaky.dev", "v=spf1 -all")

	full := dnscheck.CheckAuth(ctx, r, "acme.io")
	require.True(t, full.SPFFound)
	require.Equal(t, "v=spf1 include:_spf.google.com ~all", full.SPFRecord)
	require.True(t, full.DMARCFound)
	require.Equal(t, "quarantine", full.DMARCPolicy)
	require.Equal(t, "acme.io", full.DMARCDomain)
	require.False(t, full.DMARCInherited)
	require.Equal(t, []string{"google", "s1"}, full.DKIMSelectors)
	require.True(t, full.Aligned())
	require.Equal(t, dnscheck.AuthPassing, full.State())

	sub := dnscheck.CheckAuth(ctx, r, "Mail.Acme.io.")
	require.Equal(t, "mail.acme.io", sub.Domain)
	require.True(t, sub.DMARCFound)
	require.True(t, sub.DMARCInherited)
	require.Equal(t, "acme.io", sub.DMARCDomain)
	require.False(t, sub.DKIMFound, "positive-only: no selector answered")
	require.Equal(t, dnscheck.AuthPassing, sub.State())

	half := dnscheck.CheckAuth(ctx, r, "halfway.dev")
	require.True(t, half.SPFFound)
	require.False(t, half.DMARCFound)
	require.Equal(t, dnscheck.AuthFailing, half.State())
	require.Contains(t, half.Summary(), "DMARC")

	flaky := dnscheck.CheckAuth(ctx, r, "flaky.dev")
	require.True(t, flaky.LookupError)
	require.Equal(t, dnscheck.AuthUnknown, flaky.State(), "a failed lookup is never failing")

	reserved := dnscheck.CheckAuth(ctx, r, "example.com")
	require.True(t, reserved.Reserved)
	require.Equal(t, dnscheck.AuthUnknown, reserved.State())
	for _, q := range d.Queries() {
		require.NotContains(t, q, "example.com.", "special-use domains are not looked up")
	}
}
