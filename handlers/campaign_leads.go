package handlers

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/pagination"
)

// holdResult maps a lead's hold (nil: not held) onto the answer of the three hold operations.
func holdResult(campaignID, contactID uuid.UUID, h *campaign.Hold, w campaign.Wait) *api.CampaignLeadHoldResult {
	out := &api.CampaignLeadHoldResult{CampaignID: campaignID, ContactID: contactID, Hold: api.NilCampaignLeadHold{Null: true},
		WaitReason: api.NewOptString(w.Reason), NextStepAt: api.OptNilDateTime{Set: true, Null: true}, Sending: api.NewOptBool(w.Sending)}
	if w.Next != nil {
		out.NextStepAt = api.NewOptNilDateTime(*w.Next)
	}
	if h != nil {
		hold := api.CampaignLeadHold{Since: h.Since, Reason: api.NewOptString(h.Reason), Source: api.CampaignLeadHoldSource(h.Source),
			Until: api.OptNilDateTime{Set: true, Null: true}}
		if h.Until != nil {
			hold.Until = api.NewOptNilDateTime(*h.Until)
		}
		out.Hold = api.NewNilCampaignLeadHold(hold)
	}
	return out
}

// leadHold runs a hold operation in the caller's organization and answers the lead's hold afterwards.
func (h *Campaigns) leadHold(ctx context.Context, campaignID, contactID uuid.UUID,
	op func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (*campaign.Hold, error),
) (*api.CampaignLeadHoldResult, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var hold *campaign.Hold
	var wait campaign.Wait
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if hold, err = op(ctx, tx, org); err != nil {
			return err
		}
		wait, err = campaign.LeadWait(ctx, tx, org, campaignID, contactID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return holdResult(campaignID, contactID, hold, wait), nil
}

// CampaignsGetLeadHold answers whether a lead is held in the campaign, and how.
func (h *Campaigns) CampaignsGetLeadHold(ctx context.Context, params api.CampaignsGetLeadHoldParams) (*api.CampaignLeadHoldResult, error) {
	return h.leadHold(ctx, params.ID, params.ContactId, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (*campaign.Hold, error) {
		return campaign.LeadHold(ctx, tx, org, params.ID, params.ContactId)
	})
}

// CampaignsPauseLead holds a lead by hand, until a time or until resumed.
func (h *Campaigns) CampaignsPauseLead(ctx context.Context, req api.OptCampaignLeadPauseRequest, params api.CampaignsPauseLeadParams) (*api.CampaignLeadHoldResult, error) {
	var until *time.Time
	if v, ok := req.Value.Until.Get(); req.Set && ok {
		until = &v
	}
	reason := req.Value.Reason.Value
	return h.leadHold(ctx, params.ID, params.ContactId, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (*campaign.Hold, error) {
		return h.store.PauseLead(ctx, tx, org, params.ID, params.ContactId, until, reason)
	})
}

// CampaignsResumeLead lifts a lead's hold.
func (h *Campaigns) CampaignsResumeLead(ctx context.Context, params api.CampaignsResumeLeadParams) (*api.CampaignLeadHoldResult, error) {
	return h.leadHold(ctx, params.ID, params.ContactId, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (*campaign.Hold, error) {
		return nil, h.store.ResumeLead(ctx, tx, org, params.ID, params.ContactId)
	})
}

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
