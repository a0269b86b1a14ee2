package campaign

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
)

// Move changes a campaign's status on the engine's own decision (completed when its leads are done or its end
// date passed, paused_no_accounts when no sender is left, active again when a lead arrives after it completed),
// with the reason, and raises the lifecycle event and activity-log line a person's change raises. A pause
// cancels the queued sends (their leads go back to their step). row is the campaign as locked by the caller.
func (s *Store) Move(ctx context.Context, tx pgx.Tx, row dbq.Campaign, to, reason string) (Campaign, error) {
	now := s.now()
	params := updateParams(row, Campaign{Campaign: row}.Settings())
	params.Status, params.LastStatusChangeAt, params.PausedReason = to, &now, ""
	switch {
	case to == StatusCompleted:
		params.CompletedAt = &now
	case to == StatusActive:
		params.CompletedAt, params.IdleSince = nil, nil
	case Paused(to):
		params.PausedReason = reason
	}
	if _, err := queries.CampaignUpdate(ctx, tx, params); err != nil {
		return Campaign{}, classify(err)
	}
	if Paused(to) {
		if _, err := queries.CampaignTasksCancel(ctx, tx, dbq.CampaignTasksCancelParams{OrganizationID: row.OrganizationID,
			CampaignID: uuid.NullUUID{UUID: row.ID, Valid: true}, ErrorCode: "campaign_paused",
			Reason: "The campaign was paused before this message was sent: " + reason}); err != nil {
			return Campaign{}, err
		}
	}
	out, err := s.Get(ctx, tx, row.OrganizationID, row.ID)
	if err != nil {
		return Campaign{}, err
	}
	return out, s.moved(ctx, tx, out, row.Status, reason)
}
