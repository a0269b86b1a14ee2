package handlers

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/mail/dnscheck"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// CampaignsVerifyTrackingDomain resolves the campaign's tracking domain now, outside any transaction, and
// stores the outcome: a DNS miss is a state, not an error.
func (h *Campaigns) CampaignsVerifyTrackingDomain(ctx context.Context, params api.CampaignsVerifyTrackingDomainParams) (*api.TrackingDomainStatus, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var c campaign.Campaign
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		c, err = h.store.Get(ctx, tx, org, params.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	if c.TrackingDomain == "" {
		return nil, apierror.BadRequest("no_tracking_domain", "This campaign has no tracking_domain to verify.").
			WithFix("Set tracking_domain with PATCH /campaigns/{id} (such as track.example.com), point it (CNAME) at the deployment's tracking host, then verify.")
	}
	if _, reason := dnscheck.NormalizeTrackingDomain(c.TrackingDomain); reason != "" {
		return nil, apierror.BadRequest("invalid_tracking_domain", "tracking_domain: "+reason).
			WithFix("Set tracking_domain to a subdomain you control, such as track.example.com.")
	}
	checked := c.TrackingDomain
	res := dnscheck.CheckTracking(ctx, h.tracking.Resolver, checked, h.tracking.Host)
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		c, err = h.store.StoreTrackingCheck(ctx, tx, org, params.ID, campaign.TrackingCheck{Domain: checked,
			Verified: res.Status == dnscheck.TrackingVerified, LookupFailed: res.Status == dnscheck.TrackingLookupError})
		return err
	})
	if err != nil {
		return nil, err
	}
	if c.TrackingDomain != checked {
		res = dnscheck.TrackingResult{Status: string(api.TrackingDomainStatusStatusPending), Message: "The tracking domain changed while it was being checked; verify it again."}
	}
	out := &api.TrackingDomainStatus{TrackingDomain: api.NewOptString(c.TrackingDomain),
		TrackingDomainVerified:   api.NewOptBool(c.TrackingDomain != "" && c.TrackingDomainVerifiedAt != nil),
		TrackingDomainVerifiedAt: nilTimeAPI(c.TrackingDomainVerifiedAt), CnameTarget: api.NewOptString(h.tracking.Host),
		Status: api.NewOptTrackingDomainStatusStatus(api.TrackingDomainStatusStatus(res.Status)), Message: api.NewOptString(res.Message),
		TrackingHostUnresolvable: api.NewOptBool(res.HostUnresolvable)}
	if res.Observed != "" {
		out.Observed = api.NewOptString(res.Observed)
	}
	return out, nil
}
