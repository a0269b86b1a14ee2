package handlers

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/pagination"
)

// CampaignsListLogs pages through a campaign's activity log, newest first; the cursor is the id of the last
// entry of the previous page, as the contract fixes it, and pagination.total counts every entry.
func (h *Campaigns) CampaignsListLogs(ctx context.Context, params api.CampaignsListLogsParams) (*api.CampaignLogList, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	limit, err := pagination.Limit(params.Limit.Value, params.Limit.Set, defaultCampaignPage, maxCampaignPage, true)
	if err != nil {
		return nil, err
	}
	var before uuid.NullUUID
	if v, ok := params.Cursor.Get(); ok {
		id, err := uuid.Parse(v)
		if err != nil {
			return nil, apierror.BadRequest("invalid_cursor", "cursor must be the next_cursor of a previous page (the id of a log entry).")
		}
		before = uuid.NullUUID{UUID: id, Valid: true}
	}
	var total int64
	rows, hasMore, err := keysetRows(ctx, h.pool, org, limit,
		func(ctx context.Context, tx pgx.Tx, rowLimit int32) ([]dbq.CampaignLog, error) {
			return campaign.Logs(ctx, tx, org, params.ID, before, rowLimit)
		},
		func(ctx context.Context, tx pgx.Tx, _ []dbq.CampaignLog) error {
			total, err = campaign.LogCount(ctx, tx, org, params.ID)
			return err
		})
	if err != nil {
		return nil, err
	}
	out := &api.CampaignLogList{Data: make([]api.CampaignLog, 0, len(rows)),
		Pagination: api.Pagination{HasMore: hasMore, Total: api.NewOptNilInt64(total)}}
	for _, r := range rows {
		entry := api.CampaignLog{ID: r.ID, CampaignID: r.CampaignID, EventType: r.EventType, Message: api.NewOptString(r.Message),
			CreatedAt: r.CreatedAt}
		var meta api.CampaignLogMetadata
		if err := meta.UnmarshalJSON(r.Metadata); err != nil {
			return nil, err
		}
		entry.Metadata = api.NewOptCampaignLogMetadata(meta)
		out.Data = append(out.Data, entry)
	}
	if hasMore {
		out.Pagination.NextCursor = api.NewOptNilString(rows[len(rows)-1].ID.String())
	}
	return out, nil
}
