package handlers

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
)

// CampaignsListSenders returns the campaign's explicit sender pool in its order.
func (h *Campaigns) CampaignsListSenders(ctx context.Context, params api.CampaignsListSendersParams) (*api.CampaignSenderList, error) {
	return h.senders(ctx, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) ([]dbq.CampaignMailbox, error) {
		return campaign.Senders(ctx, tx, org, params.ID)
	})
}

// CampaignsReplaceSenders replaces the explicit sender pool and returns it; an emptied pool pauses an active
// explicit campaign (paused_no_accounts).
func (h *Campaigns) CampaignsReplaceSenders(ctx context.Context, req *api.CampaignSendersReplace, params api.CampaignsReplaceSendersParams) (*api.CampaignSenderList, error) {
	in := sendersOf(req.Senders)
	return h.senders(ctx, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) ([]dbq.CampaignMailbox, error) {
		return h.store.SetSenders(ctx, tx, org, params.ID, in)
	})
}

// senders runs a sender pool operation in the caller's organization and maps the pool it answers.
func (h *Campaigns) senders(ctx context.Context, op func(ctx context.Context, tx pgx.Tx, org uuid.UUID) ([]dbq.CampaignMailbox, error)) (*api.CampaignSenderList, error) {
	var rows []dbq.CampaignMailbox
	err := h.inOrg(ctx, func(ctx context.Context, tx pgx.Tx, org uuid.UUID) (err error) {
		rows, err = op(ctx, tx, org)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.CampaignSenderList{Data: make([]api.CampaignSender, len(rows))}
	for i, s := range rows {
		out.Data[i] = api.CampaignSender{EmailAccountID: s.MailboxID, Weight: int(s.Weight), Enabled: s.Enabled,
			LastSentAt: nilTimeAPI(s.LastSentAt)}
	}
	return out, nil
}
