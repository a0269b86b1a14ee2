package campaign

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
)

// emptyPoolReason is why an explicit campaign was paused when its sender pool emptied (its paused_reason and
// the reason of its campaign.paused event).
const emptyPoolReason = "the explicit sender pool has no enabled, active mailbox left."

// Senders reads a campaign's explicit sender pool in its order (404 for an unknown campaign).
func Senders(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) ([]dbq.CampaignMailbox, error) {
	if _, err := queries.CampaignGet(ctx, tx, dbq.CampaignGetParams{OrganizationID: org, ID: id}); err != nil {
		return nil, classify(err)
	}
	return queries.CampaignSendersOf(ctx, tx, dbq.CampaignSendersOfParams{OrganizationID: org, CampaignID: id})
}

// SetSenders replaces a campaign's explicit sender pool (see ReplaceSenders) and raises campaign.updated. An
// active campaign with the explicit strategy left without an enabled, active mailbox in its pool (its senders
// and the mailboxes carrying its tags) moves to paused_no_accounts: it never widens to the organization's other
// mailboxes, its queued sends are cancelled, campaign.paused is raised and the activity log says why. The tags
// strategy falls back to every active mailbox and never pauses here.
func (s *Store) SetSenders(ctx context.Context, tx pgx.Tx, org, id uuid.UUID, senders []SenderInput) ([]dbq.CampaignMailbox, error) {
	row, err := lock(ctx, tx, org, id)
	if err != nil {
		return nil, err
	}
	if err := ReplaceSenders(ctx, tx, org, id, senders); err != nil {
		return nil, err
	}
	if err := s.changed(ctx, tx, row, map[string]any{"fields": []string{"senders"}, "change": "senders_replaced", "senders": len(senders)}); err != nil {
		return nil, err
	}
	if row.Status == StatusActive && row.SenderStrategy == StrategyExplicit {
		if err := s.pauseIfPoolEmpty(ctx, tx, row); err != nil {
			return nil, err
		}
	}
	return queries.CampaignSendersOf(ctx, tx, dbq.CampaignSendersOfParams{OrganizationID: org, CampaignID: id})
}

// pauseIfPoolEmpty moves an active explicit campaign with no mailbox to send from to paused_no_accounts.
func (s *Store) pauseIfPoolEmpty(ctx context.Context, tx pgx.Tx, row dbq.Campaign) error {
	c, err := s.withLabels(ctx, tx, row.OrganizationID, []dbq.Campaign{row})
	if err != nil {
		return err
	}
	n, err := queries.CampaignPoolSize(ctx, tx, dbq.CampaignPoolSizeParams{OrganizationID: row.OrganizationID,
		CampaignID: row.ID, TagIds: nonNilIDs(c[0].EmailTags)})
	if err != nil || n > 0 {
		return err
	}
	now := s.now()
	params := updateParams(row, c[0].Settings())
	params.Status, params.PausedReason, params.LastStatusChangeAt = StatusPausedNoAccounts, emptyPoolReason, &now
	if _, err := queries.CampaignUpdate(ctx, tx, params); err != nil {
		return classify(err)
	}
	if _, err := cancelQueued(ctx, tx, dbq.CampaignTasksCancelParams{OrganizationID: row.OrganizationID,
		CampaignID: uuid.NullUUID{UUID: row.ID, Valid: true}, ErrorCode: "campaign_paused",
		Reason: "The campaign was paused before this message was sent: its sender pool is empty."}); err != nil {
		return err
	}
	out, err := s.Get(ctx, tx, row.OrganizationID, row.ID)
	if err != nil {
		return err
	}
	return s.moved(ctx, tx, out, row.Status, emptyPoolReason)
}
