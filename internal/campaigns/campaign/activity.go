package campaign

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
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
