package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/internal/testkit/verifytest"
)

func TestCampaignTrackingDomainVerifyResolvesStoresAndKeepsThroughLookupFailures(t *testing.T) {
	t.Parallel()
	d := verifytest.NewDNS(t)
	d.A("t.outflow.dev", "198.51.100.10")
	r := newAdvRig(t, func(c *config.Config) {
		c.DNSServer = d.Addr
		c.TrackingHost = "t.outflow.dev"
	})
	ctx := context.Background()
	verify := func(id uuid.UUID) *api.TrackingDomainStatus {
		t.Helper()
		st, err := r.c.CampaignsVerifyTrackingDomain(ctx, api.CampaignsVerifyTrackingDomainParams{ID: id})
		require.NoError(t, err)
		return st
	}
	camp := r.campaign(t, api.CampaignCreate{Name: "Tracked", TrackingDomain: api.NewOptString("Track.Acme.io")}).ID

	// Not published yet: a state with a reason, not an error.
	st := verify(camp)
	require.Equal(t, "track.acme.io", st.TrackingDomain.Value)
	require.Equal(t, api.TrackingDomainStatusStatusNotFound, st.Status.Value)
	require.False(t, st.TrackingDomainVerified.Value)
	require.True(t, st.TrackingDomainVerifiedAt.Null)
	require.Equal(t, "t.outflow.dev", st.CnameTarget.Value)
	require.NotEmpty(t, st.Message.Value)

	d.CNAME("track.acme.io", "elsewhere.example.net")
	st = verify(camp)
	require.Equal(t, api.TrackingDomainStatusStatusWrongTarget, st.Status.Value)
	require.Equal(t, "elsewhere.example.net", st.Observed.Value)
	require.False(t, st.TrackingDomainVerified.Value)

	d.CNAME("track.acme.io", "t.outflow.dev")
	st = verify(camp)
	require.Equal(t, api.TrackingDomainStatusStatusVerified, st.Status.Value)
	require.True(t, st.TrackingDomainVerified.Value)
	verifiedAt := st.TrackingDomainVerifiedAt.Value
	got, err := r.c.CampaignsGet(ctx, api.CampaignsGetParams{ID: camp})
	require.NoError(t, err)
	require.True(t, got.TrackingDomainVerified.Value)
	require.True(t, verifiedAt.Equal(got.TrackingDomainVerifiedAt.Value))
	require.True(t, verifiedAt.Equal(verify(camp).TrackingDomainVerifiedAt.Value), "verifying again keeps the first time")

	// A record pointing elsewhere clears the stored verification.
	d.CNAME("track.acme.io", "elsewhere.example.net")
	st = verify(camp)
	require.False(t, st.TrackingDomainVerified.Value)
	require.True(t, st.TrackingDomainVerifiedAt.Null)
	got, err = r.c.CampaignsGet(ctx, api.CampaignsGetParams{ID: camp})
	require.NoError(t, err)
	require.False(t, got.TrackingDomainVerified.Value)
	require.True(t, got.TrackingDomainVerifiedAt.Null)

	// A resolver failure never revokes a verified domain.
	d.CNAME("track.acme.io", "t.outflow.dev")
	verifiedAt = verify(camp).TrackingDomainVerifiedAt.Value
	d.ServFail("track.acme.io")
	st = verify(camp)
	require.Equal(t, api.TrackingDomainStatusStatusLookupError, st.Status.Value)
	require.True(t, st.TrackingDomainVerified.Value)
	require.True(t, verifiedAt.Equal(st.TrackingDomainVerifiedAt.Value))
	require.Equal(t, []string{"campaign.tracking_domain_verified", "campaign.tracking_domain_unverified", "campaign.tracking_domain_verified"},
		auditEventsWithPrefix(t, r, "campaign.tracking_domain_"), "each change of the verified state is audited once")

	// Nothing to verify, something no tracking host can serve, or no such campaign.
	_, err = r.c.CampaignsVerifyTrackingDomain(ctx, api.CampaignsVerifyTrackingDomainParams{ID: r.camp})
	requireAPIError(t, err, http.StatusBadRequest, "no_tracking_domain")
	ip := r.campaign(t, api.CampaignCreate{Name: "By address", TrackingDomain: api.NewOptString("203.0.113.7")}).ID
	_, err = r.c.CampaignsVerifyTrackingDomain(ctx, api.CampaignsVerifyTrackingDomainParams{ID: ip})
	requireAPIError(t, err, http.StatusBadRequest, "invalid_tracking_domain")
	_, err = r.c.CampaignsVerifyTrackingDomain(ctx, api.CampaignsVerifyTrackingDomainParams{ID: uuid.New()})
	requireAPIError(t, err, http.StatusNotFound, "campaign_not_found")
}

func TestCampaignTrackingDomainNeverVerifiesWithoutATrackingHost(t *testing.T) {
	t.Parallel()
	d := verifytest.NewDNS(t)
	r := newAdvRig(t, func(c *config.Config) { c.DNSServer = d.Addr })
	d.CNAME("track.acme.io", "t.outflow.dev")
	camp := r.campaign(t, api.CampaignCreate{Name: "Tracked", TrackingDomain: api.NewOptString("track.acme.io")}).ID
	st, err := r.c.CampaignsVerifyTrackingDomain(context.Background(), api.CampaignsVerifyTrackingDomainParams{ID: camp})
	require.NoError(t, err)
	require.Equal(t, api.TrackingDomainStatusStatusNoTarget, st.Status.Value)
	require.False(t, st.TrackingDomainVerified.Value)
	require.Empty(t, st.CnameTarget.Value)
}

// auditEventsWithPrefix lists the rig organization's audit events that start with prefix, oldest first.
func auditEventsWithPrefix(t *testing.T, r advRig, prefix string) []string {
	t.Helper()
	var out []string
	for _, e := range orgAuditActions(t, r.env, r.org) {
		if strings.HasPrefix(e, prefix) {
			out = append(out, e)
		}
	}
	return out
}
