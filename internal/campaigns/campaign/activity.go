package campaign

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// Logs reads one page of a campaign's activity log, newest first: rowLimit entries older than before (from
// the newest when before is not valid). An unknown campaign is 404 campaign_not_found, not an empty log.
func Logs(ctx context.Context, tx pgx.Tx, org, campaign uuid.UUID, before uuid.NullUUID, rowLimit int32) ([]dbq.CampaignLog, error) {
	if _, err := queries.CampaignGet(ctx, tx, dbq.CampaignGetParams{OrganizationID: org, ID: campaign}); err != nil {
		return nil, classify(err)
	}
	return queries.CampaignLogList(ctx, tx, dbq.CampaignLogListParams{OrganizationID: org, CampaignID: campaign,
		Before: before, RowLimit: rowLimit})
}

// LogCount is the number of entries in a campaign's activity log.
func LogCount(ctx context.Context, tx pgx.Tx, org, campaign uuid.UUID) (int64, error) {
	return queries.CampaignLogCount(ctx, tx, dbq.CampaignLogCountParams{OrganizationID: org, CampaignID: campaign})
}

// TrackingCheck is one resolution of a campaign's tracking domain, as the caller's DNS check found it (the
// campaigns area asks no DNS questions itself).
type TrackingCheck struct {
	// Domain is the domain resolved.
	Domain string
	// Verified says it points at the deployment's tracking host.
	Verified bool
	// LookupFailed says the lookup itself failed, which proves nothing either way.
	LookupFailed bool
}

// StoreTrackingCheck records a check of the campaign's tracking domain: a verified domain keeps the time it was
// first verified (or is stamped now), a failed lookup keeps what was stored (a transient failure never revokes a
// verified domain), and any other outcome clears it. A check of a domain the campaign no longer has changes
// nothing. A change of the verified state is audited. Answers the campaign as stored.
func (s *Store) StoreTrackingCheck(ctx context.Context, tx pgx.Tx, org, id uuid.UUID, chk TrackingCheck) (Campaign, error) {
	row, err := lock(ctx, tx, org, id)
	if err != nil {
		return Campaign{}, err
	}
	if row.TrackingDomain != chk.Domain || chk.LookupFailed {
		return s.Get(ctx, tx, org, id)
	}
	at := row.TrackingDomainVerifiedAt
	switch {
	case chk.Verified && at == nil:
		now := s.now()
		at = &now
	case !chk.Verified:
		at = nil
	}
	if (at == nil) != (row.TrackingDomainVerifiedAt == nil) {
		if err := queries.CampaignTrackingVerifiedSet(ctx, tx, dbq.CampaignTrackingVerifiedSetParams{VerifiedAt: at,
			OrganizationID: org, ID: id, TrackingDomain: chk.Domain}); err != nil {
			return Campaign{}, err
		}
		event := "campaign.tracking_domain_verified"
		if at == nil {
			event = "campaign.tracking_domain_unverified"
		}
		if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionVerify, Event: event, EntityType: audit.EntityCampaign,
			EntityID: id.String(), Metadata: map[string]any{"tracking_domain": chk.Domain}}); err != nil {
			return Campaign{}, err
		}
	}
	return s.Get(ctx, tx, org, id)
}
