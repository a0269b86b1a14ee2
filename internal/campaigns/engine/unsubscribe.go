package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/compose"
	"github.com/outflowhq/outflow/internal/campaigns/tracking"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/truncate"
)

// ReasonUnsubscribed is why a lead whose contact unsubscribed has nothing more to do (the planner says the
// same of a lead it finds unsubscribed).
const ReasonUnsubscribed = "the contact unsubscribed"

// unsubscribe is the unsubscribe input of a message to be sent as task from sender: the campaign's
// unsubscribe line and, when the List-Unsubscribe header or the line's link needs it, the recipient's
// unsubscribe page, signed for the task (one HMAC). Nil when nothing is added; no page without a signer.
func (pl *planner) unsubscribe(sender *dbq.Mailbox, task uuid.UUID) (*compose.Unsubscribe, error) {
	line := pl.overrides.Unsubscribe
	page := pl.row.UnsubscribeHeader || line.Mode == "link"
	if !page && line.Mode != "text" {
		return nil, nil
	}
	u := &compose.Unsubscribe{Line: line}
	if t := pl.e.tracking; page && t.Signer != nil {
		token, err := t.Signer.Sign(tracking.Token{Kind: tracking.KindUnsubscribe, OrganizationID: pl.org, TaskID: task})
		if err != nil {
			return nil, err
		}
		u.URL = compose.TrackingBaseURL(&pl.row, sender, t.Host, t.PublicURL) + "/u/" + token
	}
	return u, nil
}

// Unsubscription is a contact's unsubscribe as the engine applies it to the contact's leads.
type Unsubscription struct {
	// OrganizationID and ContactID name the contact.
	OrganizationID, ContactID uuid.UUID
	// Email is the address that unsubscribed, for the campaigns' activity logs.
	Email string
	// Source is how the contact unsubscribed (one_click, link, reply or action), for the activity logs.
	Source string
	// At is when: the campaigns' days are credited as of then.
	At time.Time
}

// Stopped is what Unsubscribed did.
type Stopped struct {
	// Campaigns are the campaigns whose lead of the contact stopped with steps left.
	Campaigns []uuid.UUID
	// Cancelled are the queued sends it cancelled.
	Cancelled []uuid.UUID
}

// Unsubscribed stops the contact's leads in every campaign of the organization, in the caller's transaction
// (the one that unsubscribes the contact), so no further step is sent and nothing already queued goes out:
//
//   - each campaign is locked first (the order a planning pass and a failed send's settlement take), then its
//     lead's queued send is cancelled and the lead locked, as a reply cancels one (see Replied): the step is
//     undone and its place given back to the campaign's day and the mailbox's plan;
//   - a lead with steps left (pending, active or paused, or held) completes with ReasonUnsubscribed, its hold
//     lifted; a lead that had ended keeps its state;
//   - the campaign's activity log says what happened, and a campaign whose last open lead it was completes.
//
// A send being attempted finishes; its result no longer moves the lead. Leads are taken in campaign order.
func Unsubscribed(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, u Unsubscription) (Stopped, error) {
	var out Stopped
	ids, err := queries.UnsubscribeLeadCampaigns(ctx, tx, dbq.UnsubscribeLeadCampaignsParams{OrganizationID: u.OrganizationID,
		ContactID: u.ContactID})
	if err != nil {
		return out, err
	}
	store := campaign.NewStore(outbox, 0, func() time.Time { return u.At })
	for _, id := range ids {
		row, err := queries.CampaignGetForUpdate(ctx, tx, dbq.CampaignGetForUpdateParams{OrganizationID: u.OrganizationID, ID: id})
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return out, err
		}
		// The answer's task stands for the contact only: lock reads no more of it.
		a := answer{settlement: settlement{tx: tx, outbox: outbox, store: store, row: row, now: u.At,
			task: dbq.SendTask{OrganizationID: u.OrganizationID, ContactID: uuid.NullUUID{UUID: u.ContactID, Valid: true}}}}
		found, err := a.lock(ctx, true, "contact_unsubscribed", "The contact unsubscribed before this message was sent.")
		if err != nil {
			return out, err
		}
		if !found {
			continue
		}
		stop := waiting(a.lead.State) || a.lead.HoldSince != nil
		if !stop && a.cancelled == nil {
			continue
		}
		p := a.params()
		if stop {
			p.State, p.DueAt, p.WaitReason, p.TaskID = stateCompleted, nil, ReasonUnsubscribed, uuid.NullUUID{}
			p.HoldSince, p.HoldUntil, p.HoldReason, p.HoldSource = nil, nil, "", nil
			out.Campaigns = append(out.Campaigns, id)
		}
		if err := queries.EngineLeadAnswered(ctx, tx, p); err != nil {
			return out, err
		}
		msg := fmt.Sprintf("%s unsubscribed (%s); the lead stopped.", u.Email, u.Source)
		meta := map[string]any{"source": u.Source}
		if a.cancelled != nil {
			out.Cancelled = append(out.Cancelled, a.cancelled.ID)
			msg = fmt.Sprintf("%s unsubscribed (%s); the lead stopped and its queued send %q was cancelled.", u.Email,
				u.Source, a.cancelled.Subject)
			meta["cancelled_task_id"] = a.cancelled.ID
		}
		raw, err := json.Marshal(meta)
		if err != nil {
			return out, err
		}
		if err := campaign.Log(ctx, tx, u.OrganizationID, id, uuid.NullUUID{UUID: u.ContactID, Valid: true},
			"lead_unsubscribed", truncate.Chars(msg, 2000), raw); err != nil {
			return out, err
		}
		if stop {
			if err := completeIfDone(ctx, store, tx, u.OrganizationID, id, u.At); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}
