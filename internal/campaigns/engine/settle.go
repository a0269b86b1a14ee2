package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/deliverability"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/dsn"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/truncate"
)

// Settle is the send pipeline's settle hook (sending.OnSettle): a campaign send's result moves its lead, in
// the transaction that records the result. Sent keeps the step's advance (the lead is active, its sent count
// and sender recorded, campaign.email_sent raised); failed undoes it (part 1's rule 2: the step is due again
// after a pause, the campaign's day gets the send back, the activity log says why, a campaign that completed
// meanwhile is reopened, and the lead fails after the campaign's attempts); a recipient the server rejected is
// a hard bounce, never retried, recorded by the deliverability recorder after the lead is moved (its evidence,
// the address's suppression, campaign.email_bounced and the campaign's bounce rate). A send that is no longer
// its lead's in-flight one changes nothing. An ambiguous send keeps its lead waiting on it (with the reason)
// until it settles as sent or, by a person's decision, skipped: skipped moves the lead on without counting it.
func (e *Engine) Settle(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, s sending.Settled) error {
	t := s.Task
	if t.Kind != sending.KindCampaign || !t.CampaignID.Valid || !t.ContactID.Valid {
		return nil
	}
	org, campaignID, contact := t.OrganizationID, t.CampaignID.UUID, t.ContactID.UUID
	if s.Status == sending.StatusAmbiguous {
		// The send may or may not have left: the lead keeps waiting on it until its Sent folder (or a person)
		// settles it, so it neither misses the step nor gets it twice.
		return queries.EngineLeadAwaitOutcome(ctx, tx, dbq.EngineLeadAwaitOutcomeParams{OrganizationID: org, CampaignID: campaignID,
			ContactID: contact, TaskID: uuid.NullUUID{UUID: t.ID, Valid: true}, WaitReason: waitOutcomeUnknown})
	}
	if s.Status == sending.StatusFailed {
		// A failure changes the campaign's day and plans and may reopen or pause it: the campaign is locked
		// first, in the order a planning pass and a stop take their locks (campaign, then leads, plans, day).
		if _, err := queries.CampaignGetForUpdate(ctx, tx, dbq.CampaignGetForUpdateParams{OrganizationID: org, ID: campaignID}); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			return err
		}
	}
	lead, err := queries.EngineLeadForTask(ctx, tx, dbq.EngineLeadForTaskParams{OrganizationID: org, CampaignID: campaignID,
		ContactID: contact, TaskID: uuid.NullUUID{UUID: t.ID, Valid: true}})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	row, err := queries.CampaignGet(ctx, tx, dbq.CampaignGetParams{OrganizationID: org, ID: campaignID})
	if err != nil {
		return err
	}
	st := settlement{e: e, tx: tx, outbox: outbox, store: campaign.NewStore(outbox, 0, e.now), row: row, lead: lead,
		task: t, now: e.now()}
	if s.Status == sending.StatusFailed {
		return st.failed(ctx, s)
	}
	return st.sent(ctx, s.Status == sending.StatusSent)
}

// settlement is one send result being applied to its lead.
type settlement struct {
	e      *Engine
	tx     pgx.Tx
	outbox *events.Outbox
	store  *campaign.Store
	row    dbq.Campaign
	lead   dbq.CampaignLead
	task   dbq.SendTask
	now    time.Time
}

func (st *settlement) params() dbq.EngineLeadSettleParams {
	l := st.lead
	return dbq.EngineLeadSettleParams{OrganizationID: l.OrganizationID, CampaignID: l.CampaignID, ContactID: l.ContactID,
		State: l.State, StepPosition: l.StepPosition, DueAt: l.DueAt, WaitReason: l.WaitReason, Attempts: l.Attempts,
		FailureReason: l.FailureReason}
}

// waitOutcomeUnknown is the wait reason of a lead whose send's outcome is being settled.
const waitOutcomeUnknown = "The last send's outcome is unknown (the connection broke after the message was handed over); it is being looked for in the mailbox's Sent folder, or waits for a person's decision."

// sent keeps the advance: delivered counts as a sent step; a skipped ambiguous send (it may have been
// delivered, and a person chose not to send it again) moves on without counting.
func (st *settlement) sent(ctx context.Context, delivered bool) error {
	steps, err := queries.EngineStepCount(ctx, st.tx, dbq.EngineStepCountParams{OrganizationID: st.row.OrganizationID, CampaignID: st.row.ID})
	if err != nil {
		return err
	}
	p := st.params()
	p.Attempts, p.FailureReason, p.CurrentStep = 0, "", st.task.StepName
	if p.State == statePending {
		p.State = stateActive
	}
	ended := p.StepPosition >= steps && p.DueAt == nil
	if ended {
		p.State, p.WaitReason = stateCompleted, ""
	}
	if delivered {
		p.SentDelta, p.Sender = 1, st.task.FromEmail
	}
	if err := queries.EngineLeadSettle(ctx, st.tx, p); err != nil {
		return err
	}
	if delivered {
		if _, err := st.outbox.Emit(ctx, st.tx, events.CampaignEmailSent, st.payload(nil)); err != nil {
			return err
		}
	}
	if ended {
		return completeIfDone(ctx, st.store, st.tx, st.row.OrganizationID, st.row.ID, st.now)
	}
	return nil
}

// payload is the data of a send's campaign event.
func (st *settlement) payload(extra map[string]any) map[string]any {
	return campaign.SendEventData(st.row, st.task, extra)
}

// failed undoes the advance and credits the counters back; see Settle.
func (st *settlement) failed(ctx context.Context, s sending.Settled) error {
	if err := st.credit(ctx); err != nil {
		return err
	}
	ov, err := campaign.Advanced(campaign.Campaign{Campaign: st.row})
	if err != nil {
		return err
	}
	p := st.params()
	p.StepPosition = max(p.StepPosition-1, 0)
	p.Undo = true
	stepNo := p.StepPosition + 1
	bounce := s.Code == "recipient_rejected"
	ended := false
	switch {
	case bounce:
		p.State, p.DueAt, p.WaitReason, p.BouncedDelta = stateFailed, nil, "", 1
		p.FailureReason = truncate.Chars("The recipient's server rejected the address: "+s.Message, 1000)
		ended = true
	default:
		p.Attempts++
		if limit := attemptLimit(ov); p.Attempts >= limit {
			p.State, p.DueAt, p.WaitReason = stateFailed, nil, ""
			p.FailureReason = truncate.Chars(fmt.Sprintf("Step %d could not be sent after %d attempts: %s", stepNo, p.Attempts, s.Message), 1000)
			ended = true
		} else {
			due := st.now.Add(retryBackoff)
			p.DueAt, p.WaitReason = &due, ReasonRetry
		}
	}
	if err := queries.EngineLeadSettle(ctx, st.tx, p); err != nil {
		return err
	}
	msg := fmt.Sprintf("Step %d to %s failed (%s): %s", stepNo, st.task.ToEmail, s.Code, s.Message)
	if err := campaign.Log(ctx, st.tx, st.row.OrganizationID, st.row.ID, st.task.ContactID, "email_failed",
		truncate.Chars(msg, 2000), nil); err != nil {
		return err
	}
	if bounce {
		// Hard whatever the reply's codes say: part 1's rule 2 never retries a rejected recipient, so the lead has
		// bounced; the rule the codes alone would give stays with the evidence.
		rc := dsn.Diagnose(s.Message)
		if _, err := st.e.record.Record(ctx, st.tx, st.outbox, deliverability.MatchSend(st.task, deliverability.MatchedPipeline),
			deliverability.Event{OrganizationID: st.row.OrganizationID, Kind: deliverability.KindBounce,
				Source: deliverability.SourcePipeline, Recipient: st.task.ToEmail, At: st.now, Bounce: dsn.Hard,
				StatusCode: rc.Status, SMTPCode: rc.SMTPCode, Diagnostic: rc.Diagnostic, Reason: rc.Reason,
				Metadata: map[string]any{"error_code": s.Code, "rule": rc.Rule}}); err != nil {
			return err
		}
	}
	switch {
	case !ended && st.row.Status == campaign.StatusCompleted:
		_, err := st.store.Move(ctx, st.tx, st.row, campaign.StatusActive, "a send failed after it completed and its lead is retried")
		return err
	case ended:
		return completeIfDone(ctx, st.store, st.tx, st.row.OrganizationID, st.row.ID, st.now)
	}
	return nil
}

// credit gives the failed send's place back: the campaign's park ends, then the mailbox's plan and the
// campaign's day (and its new-lead count for a first step) are credited, in the order a planning pass locks
// them. The day is the one the pass planned the send on (last_step_at, the engine's clock).
func (st *settlement) credit(ctx context.Context) error {
	t, l := st.task, st.lead
	if err := queries.EngineCampaignUnpark(ctx, st.tx, dbq.EngineCampaignUnparkParams{OrganizationID: l.OrganizationID,
		ID: l.CampaignID}); err != nil {
		return err
	}
	planned := t.CreatedAt
	if l.LastStepAt != nil {
		planned = *l.LastStepAt
	}
	if t.MailboxID.Valid {
		tz, err := queries.EngineMailboxZone(ctx, st.tx, dbq.EngineMailboxZoneParams{OrganizationID: l.OrganizationID, ID: t.MailboxID.UUID})
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		default:
			if err := queries.EnginePlanCredit(ctx, st.tx, dbq.EnginePlanCreditParams{OrganizationID: l.OrganizationID,
				MailboxID: t.MailboxID.UUID, Day: sending.MailboxDay(planned, tz), Sends: 1}); err != nil {
				return err
			}
		}
	}
	loc, err := campaign.Location(st.row.Timezone)
	if err != nil {
		loc = time.UTC
	}
	var newLead int32
	if l.StepPosition == 1 && l.Sent == 0 {
		newLead = -1
	}
	return queries.EngineCampaignDayAdd(ctx, st.tx, dbq.EngineCampaignDayAddParams{OrganizationID: l.OrganizationID,
		CampaignID: l.CampaignID, Day: civilDate(planned, loc), Sent: -1, NewLeads: newLead})
}

// attemptLimit is how many failed attempts of one step fail a lead: task_reliability.max_attempts when the
// block is enabled (at most 100), else maxLeadAttempts.
func attemptLimit(ov campaign.Overrides) int16 {
	if tr := ov.TaskReliability; tr.Enabled && tr.MaxAttempts > 0 {
		return int16(min(tr.MaxAttempts, 100))
	}
	return maxLeadAttempts
}
