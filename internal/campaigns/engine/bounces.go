package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/deliverability"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/dsn"
	"github.com/outflowhq/outflow/internal/platform/truncate"
)

// ReasonComplained is why a lead whose contact reported a campaign message as spam has nothing more to do.
const ReasonComplained = "the contact reported a message as spam"

// Bounced is the deliverability recorder's lead effect (deliverability.Leads) of a bounce reported after the
// send t was handed over, in the transaction recording it.
//
// A hard bounce stops a lead that still has steps to go through as failed (its queued send cancelled and given
// back, its hold lifted) and counts the bounce on the lead whatever its state, so its status reads bounced; the
// campaign completes when that was its last open lead.
//
// A soft bounce has the step sent again, as a failed send's is: when t is still the lead's latest step (nothing
// sent, queued or in flight since, and the lead not held), the step is taken back (no longer counted as sent) and
// is due after retryBackoff, reopening a campaign that completed meanwhile; once the step has bounced softly
// attemptLimit times (counted over its sends' soft bounces) the lead fails instead. A lead that moved on is left
// as it is: its next step is the next try. The activity log says what was done either way.
func (e *Engine) Bounced(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, t dbq.SendTask, ev deliverability.Event) error {
	a, err := e.reported(ctx, tx, outbox, t)
	if err != nil || a == nil {
		return err
	}
	if ev.Bounce == dsn.Hard {
		return a.stop(ctx, ev, "recipient_bounced", "The recipient's address bounced before this message was sent.")
	}
	return a.softBounced(ctx, ev)
}

// Complained is the deliverability recorder's lead effect (deliverability.Leads) of a complaint about the send
// t: a lead that still has steps to go through completes there (ReasonComplained), its queued send cancelled and
// given back and its hold lifted; the campaign completes when that was its last open lead.
func (e *Engine) Complained(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, t dbq.SendTask, ev deliverability.Event) error {
	a, err := e.reported(ctx, tx, outbox, t)
	if err != nil || a == nil {
		return err
	}
	return a.stop(ctx, ev, "contact_complained", "The contact reported a message as spam before this message was sent.")
}

// reported is the report about t being applied to its lead; nil when t's campaign is gone.
func (e *Engine) reported(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, t dbq.SendTask) (*answer, error) {
	row, err := queries.CampaignGet(ctx, tx, dbq.CampaignGetParams{OrganizationID: t.OrganizationID, ID: t.CampaignID.UUID})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &answer{settlement: settlement{e: e, tx: tx, outbox: outbox, store: campaign.NewStore(outbox, 0, e.now), row: row,
		task: t, now: e.now()}}, nil
}

// stop applies a hard bounce or a complaint to the lead; see Bounced and Complained. code and reason are what
// its cancelled queued send records.
func (a *answer) stop(ctx context.Context, ev deliverability.Event, code, reason string) error {
	found, err := a.lock(ctx, true, code, reason)
	if err != nil || !found {
		return err
	}
	p := a.undone()
	stopped := waiting(a.lead.State)
	kind, msg := "lead_complained", fmt.Sprintf("%s reported %q as spam (%s).", a.task.ToEmail, a.task.Subject, ev.Evidence())
	if ev.Kind == deliverability.KindBounce {
		p.BouncedDelta = 1
		kind, msg = "lead_bounced", fmt.Sprintf("%q to %s bounced (%s).", a.task.Subject, a.task.ToEmail, ev.Evidence())
	}
	if stopped {
		p.DueAt = nil
		if ev.Kind == deliverability.KindBounce {
			p.State, p.WaitReason = stateFailed, ""
			p.FailureReason = truncate.Chars("The recipient's address bounced: "+ev.Evidence(), 1000)
		} else {
			p.State, p.WaitReason = stateCompleted, ReasonComplained
		}
		msg += " The lead stopped."
	}
	if err := queries.EngineLeadSettle(ctx, a.tx, p); err != nil {
		return err
	}
	if stopped && a.lead.HoldSince != nil {
		if err := queries.CampaignLeadHoldClear(ctx, a.tx, dbq.CampaignLeadHoldClearParams{Now: a.now,
			OrganizationID: p.OrganizationID, CampaignID: p.CampaignID, ContactID: p.ContactID}); err != nil {
			return err
		}
	}
	if err := a.logReport(ctx, kind, msg, ev, stopped); err != nil {
		return err
	}
	if stopped {
		return completeIfDone(ctx, a.store, a.tx, a.row.OrganizationID, a.row.ID, a.now)
	}
	return nil
}

// softBounced applies a soft bounce to the lead; see Bounced.
func (a *answer) softBounced(ctx context.Context, ev deliverability.Event) error {
	found, err := a.lock(ctx, false, "", "")
	if err != nil || !found {
		return err
	}
	l := a.lead
	latest := !l.TaskID.Valid && l.HoldSince == nil && len(l.ThreadRefs) > 0 && l.ThreadRefs[len(l.ThreadRefs)-1] == a.task.MessageID &&
		(l.State == statePending || l.State == stateActive || l.State == stateCompleted)
	msg := fmt.Sprintf("%q to %s bounced softly (%s).", a.task.Subject, a.task.ToEmail, ev.Evidence())
	if !latest {
		return a.logReport(ctx, "lead_soft_bounced", msg+" The lead has moved on since; its step is not sent again.", ev, false)
	}
	n, err := queries.DeliverabilityStepSoftBounces(ctx, a.tx, dbq.DeliverabilityStepSoftBouncesParams{OrganizationID: l.OrganizationID,
		ContactID: l.ContactID, CampaignID: l.CampaignID, StepID: a.task.StepID})
	if err != nil {
		return err
	}
	ov, err := campaign.Advanced(campaign.Campaign{Campaign: a.row})
	if err != nil {
		return err
	}
	p := a.settlement.params()
	p.Attempts = int16(min(n, 100))
	if a.task.Status == "sent" {
		p.SentDelta = -1 // the step counted as sent did not arrive
	}
	failed := p.Attempts >= attemptLimit(ov)
	if failed {
		p.State, p.DueAt, p.WaitReason = stateFailed, nil, ""
		p.FailureReason = truncate.Chars(fmt.Sprintf("Step %d bounced softly %d times: %s", l.StepPosition, n, ev.Evidence()), 1000)
		msg += fmt.Sprintf(" The lead failed: the step bounced softly %d times.", n)
	} else {
		due := a.now.Add(retryBackoff)
		p.StepPosition, p.Undo = max(p.StepPosition-1, 0), true
		p.DueAt, p.WaitReason = &due, ReasonRetry
		if p.State == stateCompleted {
			p.State = statePending
			if l.Sent+p.SentDelta > 0 {
				p.State = stateActive
			}
		}
		msg += fmt.Sprintf(" The step is sent again (soft bounce %d of %d).", n, attemptLimit(ov))
	}
	if err := queries.EngineLeadSettle(ctx, a.tx, p); err != nil {
		return err
	}
	if err := a.logReport(ctx, "lead_soft_bounced", msg, ev, failed); err != nil {
		return err
	}
	if failed {
		return completeIfDone(ctx, a.store, a.tx, a.row.OrganizationID, a.row.ID, a.now)
	}
	row, err := queries.CampaignGetForUpdate(ctx, a.tx, dbq.CampaignGetForUpdateParams{OrganizationID: a.row.OrganizationID, ID: a.row.ID})
	if err != nil || row.Status != campaign.StatusCompleted {
		return err
	}
	_, err = a.store.Move(ctx, a.tx, row, campaign.StatusActive, "a send bounced softly after it completed and its lead is retried")
	return err
}

// undone is the lead as it stands, for EngineLeadSettle, with the step of the queued send lock cancelled (if
// any) taken back.
func (a *answer) undone() dbq.EngineLeadSettleParams {
	p := a.settlement.params()
	if a.cancelled != nil {
		p.StepPosition, p.Undo = max(p.StepPosition-1, 0), true
	}
	return p
}

// logReport writes the activity-log line of a bounce or complaint applied to the lead, with its evidence.
func (a *answer) logReport(ctx context.Context, kind, msg string, ev deliverability.Event, stopped bool) error {
	raw, err := json.Marshal(map[string]any{"task_id": a.task.ID, "source": ev.Source, "bounce_type": ev.Bounce,
		"status_code": ev.StatusCode, "reason": ev.Reason, "feedback_type": ev.FeedbackType, "stopped": stopped})
	if err != nil {
		return err
	}
	return campaign.Log(ctx, a.tx, a.row.OrganizationID, a.row.ID, a.task.ContactID, kind, truncate.Chars(msg, 2000), raw)
}
