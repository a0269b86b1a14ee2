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
	"github.com/outflowhq/outflow/internal/analytics/rollup"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/mailsync"
	"github.com/outflowhq/outflow/internal/platform/truncate"
)

// Wait reasons of a lead an inbound answer moved.
const (
	// ReasonReplied is why a lead of a campaign that stops on reply has nothing more to do.
	ReasonReplied = "the contact replied"
	// ReasonOutOfOffice is why a lead whose contact answered with an out-of-office reply waits.
	ReasonOutOfOffice = "held after an out-of-office reply"
)

// Verdict is what the inbox's reply classifier said about an inbound message, as the engine applies it:
// the intent (positive, negative, question, neutral, out_of_office or automated), how sure it is, the
// evidence, and for an out-of-office reply the day its sender is back.
type Verdict struct {
	Intent     string
	Confidence float64
	// Evidence is what decided the intent, for the activity log (any JSON value).
	Evidence any
	// ReturnDate is the calendar day an out-of-office sender is back (midnight UTC of it); nil when unknown.
	ReturnDate *time.Time
	// Unsubscribe says the sender asked to be unsubscribed.
	Unsubscribe bool
}

// human says whether the verdict is a person's answer (a reply).
func (v Verdict) human() bool {
	switch v.Intent {
	case "positive", "negative", "question", "neutral":
		return true
	}
	return false
}

// Judge answers the verdict on the inbound message for a campaign whose reply_intent block is ri (its
// keywords extend the classifier's lists), so the campaigns area never imports the inbox's classifier.
type Judge func(ri campaign.ReplyIntent) Verdict

// Match is a campaign send an inbound message answers, with the campaign's reply_intent block and the verdict
// applied to its lead; the inbox applies what the engine does not own (unsubscribe by reply, CRM tasks).
type Match struct {
	Task        dbq.SendTask
	Campaign    dbq.Campaign
	ReplyIntent campaign.ReplyIntent
	Verdict     Verdict
}

// Replied applies an inbound message the caller did not classify (the deliverability ingest endpoint's
// reply events): an out-of-office one (m.OutOfOffice, held until m.HoldUntil when set) as such, every other
// as a person's neutral reply (evidence rule reported_by_provider). See Answered.
func (e *Engine) Replied(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, m mailsync.Inbound) error {
	v := Verdict{Intent: "neutral", Confidence: 0.5, Evidence: []map[string]string{{"kind": "rule", "name": "reported_by_provider", "value": "reply"}}}
	if m.OutOfOffice {
		v = Verdict{Intent: "out_of_office", Confidence: 0.5, Evidence: []map[string]string{{"kind": "rule", "name": "reported_by_provider", "value": "out_of_office"}}}
	}
	_, err := e.Answered(ctx, tx, outbox, m, func(campaign.ReplyIntent) Verdict { return v })
	return err
}

// Answered is the engine's part of the inbound hook: a message that answers a campaign send (its In-Reply-To
// or References names the send's Message-ID, it comes from the address the send went to, and it is the
// organization's) moves that send's lead, in the transaction that stores the message, as judge's verdict
// for the campaign says.
//
// A person's answer (positive, negative, question, neutral) is a reply: it stamps the send's replied_at,
// counts on the lead (replied, last_activity_at), goes to the activity log and raises
// campaign.reply_received with the intent and confidence; when the campaign stops on reply (stop_on_reply),
// a lead with steps left completes there: its queued send is cancelled (a send being attempted finishes
// without moving it) and the campaign completes when that was its last open lead. A send is replied to once:
// later messages of the conversation, or the same message stored again from another folder, change nothing.
// With reply_intent enabled and auto_pause_on_negative, a negative answer of a lead that still waits pauses
// the lead (held with no end, hold_source negative_reply, its queued send cancelled).
//
// An out-of-office reply is not a reply (the lead's status shows the hold, not replied): when the campaign's
// reply_intent block holds on out-of-office, a waiting lead that is not held already is held until the
// start of the stated return day in the campaign's timezone (at most campaign.MaxOutOfOfficeHoldDays away)
// or out_of_office_hold_days from now, its queued send cancelled so the step goes after the hold; the
// activity log says what it did either way. An automated message is never a reply and moves nothing.
//
// A bounce or complaint report (m.Report) is not an answer from the contact: it goes to the deliverability
// recorder, which matches it to the send it returns, and is never taken for a reply. Answered answers the
// matched sends with their verdicts.
func (e *Engine) Answered(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, m mailsync.Inbound, judge Judge) ([]Match, error) {
	if m.Report != nil {
		return nil, e.record.Inbound(ctx, tx, outbox, m)
	}
	ids := make([]string, 0, len(m.References)+1)
	for _, id := range append(m.References, m.InReplyTo) {
		if id != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 || m.FromEmail == "" {
		return nil, nil
	}
	sends, err := queries.EngineReplyMatch(ctx, tx, dbq.EngineReplyMatchParams{OrganizationID: m.OrganizationID,
		MessageIds: ids, FromEmail: m.FromEmail, InReplyTo: m.InReplyTo})
	if err != nil {
		return nil, err
	}
	var out []Match
	for _, t := range sends {
		row, err := queries.CampaignGet(ctx, tx, dbq.CampaignGetParams{OrganizationID: t.OrganizationID, ID: t.CampaignID.UUID})
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, err
		}
		ov, err := campaign.Advanced(campaign.Campaign{Campaign: row})
		if err != nil {
			return nil, err
		}
		ri := ov.ReplyIntent
		v := judge(ri)
		a := answer{settlement: settlement{e: e, tx: tx, outbox: outbox, store: campaign.NewStore(outbox, 0, e.now), row: row,
			task: t, now: e.now()}, msg: m, verdict: v, ri: ri}
		switch {
		case v.human():
			err = a.replied(ctx)
			if err == nil && ri.Enabled && ri.AutoPauseOnNegative && v.Intent == "negative" {
				a.cancelled = nil
				err = a.pause(ctx)
			}
		case v.Intent == "out_of_office":
			err = a.away(ctx)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, Match{Task: t, Campaign: row, ReplyIntent: ri, Verdict: v})
	}
	return out, nil
}

// answer is one inbound message being applied to the lead of the campaign send it answers (settlement.task).
type answer struct {
	settlement
	msg     mailsync.Inbound
	verdict Verdict
	ri      campaign.ReplyIntent
	// cancelled is the lead's queued send this answer cancelled, if any.
	cancelled *dbq.SendTask
}

// statePaused is a lead paused as a whole (the engine never writes it, but a reply still ends its flow).
const statePaused = "paused"

// waiting reports whether a lead in state still has steps to go through.
func waiting(state string) bool {
	return state == statePending || state == stateActive || state == statePaused
}

// replied applies a reply; see Replied.
func (a *answer) replied(ctx context.Context) error {
	at := a.msg.ReceivedAt
	if at.IsZero() {
		at = a.now
	}
	n, err := queries.EngineTaskReplied(ctx, a.tx, dbq.EngineTaskRepliedParams{OrganizationID: a.row.OrganizationID, ID: a.task.ID, At: at})
	if err != nil || n == 0 {
		return err
	}
	stop := a.row.StopOnReply
	found, err := a.lock(ctx, stop, "contact_replied", "The contact replied before this message was sent.")
	if err != nil {
		return err
	}
	stopped := false
	if found {
		p := a.params()
		p.RepliedDelta, p.ActivityAt = 1, &a.now
		if stop && waiting(a.lead.State) {
			p.State, p.DueAt, p.WaitReason, p.TaskID = stateCompleted, nil, ReasonReplied, uuid.NullUUID{}
			p.HoldSince, p.HoldUntil, p.HoldReason, p.HoldSource = nil, nil, "", nil
			stopped = true
		}
		if err := queries.EngineLeadAnswered(ctx, a.tx, p); err != nil {
			return err
		}
	}
	msg := fmt.Sprintf("%s replied to %q.", a.task.ToEmail, a.task.Subject)
	if stopped {
		msg += " The lead stopped: the campaign stops on reply."
	}
	if err := a.log(ctx, "lead_replied", msg, map[string]any{"stopped": stopped, "intent": a.verdict.Intent,
		"confidence": a.verdict.Confidence, "evidence": a.verdict.Evidence}); err != nil {
		return err
	}
	if _, err := a.outbox.Emit(ctx, a.tx, events.CampaignReplyReceived, a.payload(map[string]any{
		"reply_message_id": a.msg.MessageID, "reply_email_account_id": a.msg.MailboxID, "replied_at": at,
		"subject": a.msg.Subject, "lead_stopped": stopped, "intent": a.verdict.Intent,
		"confidence": a.verdict.Confidence})); err != nil {
		return err
	}
	if stopped {
		if err := completeIfDone(ctx, a.store, a.tx, a.row.OrganizationID, a.row.ID, a.now); err != nil {
			return err
		}
	}
	// Counted last: the rollup rows (shared by the organization's day) are locked once the campaign and the
	// lead are, as the send pipeline does, so the two never wait for each other in opposite orders.
	return rollup.Replied(ctx, a.tx, a.row.OrganizationID, a.task.ID)
}

// away applies an out-of-office reply; see Replied.
func (a *answer) away(ctx context.Context) error {
	ri := a.ri
	holds := ri.Enabled && ri.HoldOnOutOfOffice
	found, err := a.lock(ctx, holds, "contact_away", "The contact's out-of-office reply held the lead before this message was sent.")
	if err != nil || !found {
		return err
	}
	var msg string
	until := a.now.AddDate(0, 0, int(ri.OutOfOfficeHoldDays))
	h := a.msg.HoldUntil
	if d := a.verdict.ReturnDate; d != nil {
		loc, err := campaign.Location(a.row.Timezone)
		if err != nil {
			loc = time.UTC
		}
		h = time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, loc)
	}
	if h.After(a.now) {
		until = minTime(h, a.now.AddDate(0, 0, campaign.MaxOutOfOfficeHoldDays))
	}
	switch {
	case !holds:
		msg = "the campaign's reply_intent block does not hold leads on out-of-office replies"
	case !waiting(a.lead.State):
		msg = "the lead has no steps left"
	case a.lead.HoldSince != nil:
		msg = "the lead is held already"
	}
	p := a.params()
	var held *time.Time
	if msg == "" {
		src := campaign.HoldOutOfOffice
		held = &until
		p.HoldSince, p.HoldUntil, p.HoldSource = &a.now, &until, &src
		p.HoldReason = truncate.Chars("Out-of-office reply: "+a.msg.Subject, campaign.MaxHoldReason)
		p.DueAt, p.WaitReason = &until, ReasonOutOfOffice
	}
	if err := queries.EngineLeadAnswered(ctx, a.tx, p); err != nil {
		return err
	}
	if msg == "" {
		msg = fmt.Sprintf("%s answered %q with an out-of-office reply; the lead is held until %s.", a.task.ToEmail,
			a.task.Subject, until.UTC().Format(time.RFC3339))
	} else {
		msg = fmt.Sprintf("%s answered %q with an out-of-office reply; the lead is not held: %s.", a.task.ToEmail,
			a.task.Subject, msg)
	}
	return a.log(ctx, "lead_out_of_office", msg, map[string]any{"held_until": held, "evidence": a.verdict.Evidence})
}

// ReasonNegative is why a lead paused after a negative reply waits.
const ReasonNegative = "paused after a negative reply"

// pause holds the lead with no end after a negative reply (auto_pause_on_negative; see Answered): a lead
// with steps left that is not held already, its queued send cancelled.
func (a *answer) pause(ctx context.Context) error {
	found, err := a.lock(ctx, true, "lead_paused", "The lead was paused after a negative reply before this message was sent.")
	if err != nil || !found || !waiting(a.lead.State) || a.lead.HoldSince != nil {
		return err
	}
	p := a.params()
	src := campaign.HoldNegativeReply
	p.HoldSince, p.HoldUntil, p.HoldSource = &a.now, nil, &src
	p.HoldReason = truncate.Chars("Negative reply: "+a.msg.Subject, campaign.MaxHoldReason)
	p.DueAt, p.WaitReason = nil, ReasonNegative
	if err := queries.EngineLeadAnswered(ctx, a.tx, p); err != nil {
		return err
	}
	return a.log(ctx, "lead_paused", fmt.Sprintf("%s answered %q negatively; the lead is paused until resumed: the campaign pauses leads on negative replies.",
		a.task.ToEmail, a.task.Subject), map[string]any{"source": src, "evidence": a.verdict.Evidence})
}

// lock cancels the lead's queued send when cancel is set (before the lead is locked: the task's lock comes
// first, as in the send pipeline), then locks the lead; found is false when the contact is no longer a lead
// of the campaign. A send queued by a planning pass meanwhile is cancelled too.
func (a *answer) lock(ctx context.Context, cancel bool, code, reason string) (found bool, err error) {
	key := dbq.EngineLeadTaskCancelParams{OrganizationID: a.row.OrganizationID, CampaignID: a.row.ID,
		ContactID: a.task.ContactID.UUID, ErrorCode: code, Reason: reason}
	if cancel {
		if err := a.cancelQueued(ctx, key); err != nil {
			return false, err
		}
	}
	a.lead, err = queries.EngineLeadLock(ctx, a.tx, dbq.EngineLeadLockParams{OrganizationID: key.OrganizationID,
		CampaignID: key.CampaignID, ContactID: key.ContactID})
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if cancel && a.cancelled == nil && a.lead.TaskID.Valid {
		if err := a.cancelQueued(ctx, key); err != nil {
			return false, err
		}
	}
	if a.cancelled != nil {
		undone := settlement{tx: a.tx, row: a.row, lead: a.lead, task: *a.cancelled}
		if err := undone.credit(ctx); err != nil {
			return false, err
		}
	}
	return true, nil
}

func (a *answer) cancelQueued(ctx context.Context, key dbq.EngineLeadTaskCancelParams) error {
	t, err := queries.EngineLeadTaskCancel(ctx, a.tx, key)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	a.cancelled = &t
	return nil
}

// params are the lead as it is, with the cancelled send's step undone: the step is due again (after a hold)
// and the campaign's day and the mailbox's plan get its place back.
func (a *answer) params() dbq.EngineLeadAnsweredParams {
	l := a.lead
	p := dbq.EngineLeadAnsweredParams{OrganizationID: l.OrganizationID, CampaignID: l.CampaignID, ContactID: l.ContactID,
		State: l.State, StepPosition: l.StepPosition, DueAt: l.DueAt, WaitReason: l.WaitReason, TaskID: l.TaskID,
		ThreadRefs: l.ThreadRefs, HoldSince: l.HoldSince, HoldUntil: l.HoldUntil, HoldReason: l.HoldReason,
		HoldSource: l.HoldSource}
	if a.cancelled != nil {
		p.TaskID, p.Undo = uuid.NullUUID{}, true
		p.StepPosition = max(p.StepPosition-1, 0)
		if n := len(p.ThreadRefs); n > 0 {
			p.ThreadRefs = p.ThreadRefs[:n-1]
		}
		if l.HoldSince == nil {
			p.DueAt, p.WaitReason = &a.now, ""
		}
	}
	return p
}

// log writes the activity-log line of the answer, with the reply's Message-ID and the send it answers.
func (a *answer) log(ctx context.Context, kind, msg string, meta map[string]any) error {
	meta["task_id"], meta["reply_message_id"], meta["email_account_id"] = a.task.ID, a.msg.MessageID, a.msg.MailboxID
	raw, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	return campaign.Log(ctx, a.tx, a.row.OrganizationID, a.row.ID, a.task.ContactID, kind, truncate.Chars(msg, 2000), raw)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
