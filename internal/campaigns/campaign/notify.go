package campaign

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/eventing/notify"
	"github.com/outflowhq/outflow/internal/platform/truncate"
)

// Owners are the people told what happens to a campaign without them (an automatic pause, its bounces and
// complaints): the campaign's owner when it has one (owner), else the organization's owners and admins, who
// are also the ones told about mail that belongs to no campaign (owner not valid).
func Owners(ctx context.Context, tx pgx.Tx, org uuid.UUID, owner uuid.NullUUID) ([]uuid.UUID, error) {
	if owner.Valid {
		return []uuid.UUID{owner.UUID}, nil
	}
	return queries.WebhookOrgAdmins(ctx, tx, org)
}

// NotifyPaused sends the campaign_paused notification about a campaign the system paused (c, after the pause)
// to its Owners, saying why: whoever paused it, the engine or the deliverability judgement, tells them alike.
func NotifyPaused(ctx context.Context, tx pgx.Tx, jobs events.Inserter, c dbq.Campaign, reason string) error {
	users, err := Owners(ctx, tx, c.OrganizationID, c.UserID)
	if err != nil {
		return err
	}
	n := notify.NewNotifier(jobs)
	for _, u := range users {
		if err := n.NotifyTx(ctx, tx, notify.Event{UserID: u, OrganizationID: c.OrganizationID, Category: notify.CampaignPaused,
			Title: truncate.Chars("Campaign paused: "+c.Name, 200), Body: "It was paused because " + reason + ".",
			Link: "/campaigns/" + c.ID.String()}); err != nil {
			return err
		}
	}
	return nil
}
