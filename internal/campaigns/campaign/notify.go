package campaign

import (
	"context"
	"maps"

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

// SendEventData is the data of an event about one campaign send (campaign.email_sent's shape: the campaign,
// the contact and address, the step, the send and its mailbox, the A/B variant), with extra's keys added, so
// every event about a send, whichever path raises it, names it alike.
func SendEventData(c dbq.Campaign, t dbq.SendTask, extra map[string]any) map[string]any {
	out := map[string]any{"campaign_id": c.ID, "campaign_name": c.Name, "contact_id": t.ContactID.UUID,
		"email": t.ToEmail, "step_id": t.StepID.UUID, "step_name": t.StepName, "task_id": t.ID,
		"message_id": t.MessageID, "mailbox_id": t.MailboxID.UUID, "from_email": t.FromEmail}
	if t.VariantID.Valid {
		out["variant_id"] = t.VariantID.UUID
	}
	maps.Copy(out, extra)
	return out
}
