package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/compose"
	"github.com/outflowhq/outflow/internal/mail/sending"
)

// Lead states the engine writes (the status the API shows is derived from them, see contacts.LeadStatusSQL).
const (
	statePending       = "pending"
	stateActive        = "active"
	stateCompleted     = "completed"
	stateFailed        = "failed"
	stateUndeliverable = "undeliverable"
)

// verifyRecheck is how long a lead waits for its address's first check before it is looked at again.
const verifyRecheck = 2 * time.Minute

// wait leaves the lead waiting until at, saying why.
func (d *decision) wait(at time.Time, reason string) {
	d.due, d.reason = &at, reason
}

// stop ends the lead: it is not due again.
func (pl *planner) stop(d *decision, state, reason, failure string) {
	d.state, d.due, d.reason, d.failure = state, nil, reason, failure
	pl.ended = true
}

// decide decides one due lead: held, stopped (unsubscribed, refused address, sequence done), waiting (entry
// delay, contact hours, a limit, no free sender), or sent its step.
func (pl *planner) decide(ctx context.Context, l *dbq.EngineDueLeadsRow) error {
	pl.decisions = append(pl.decisions, decision{lead: l, state: l.State, pos: l.StepPosition, due: l.DueAt,
		mailbox: l.MailboxID, variant: l.VariantID, last: l.LastStepAt, attempts: l.Attempts})
	d := &pl.decisions[len(pl.decisions)-1]
	now := pl.now
	if l.HoldSince != nil {
		if l.HoldUntil == nil || l.HoldUntil.After(now) {
			d.due, d.reason = l.HoldUntil, ReasonHeld
			return nil
		}
		d.holdLifted = true
	}
	if !l.Subscribed {
		pl.stop(d, stateCompleted, "the contact unsubscribed", "")
		return nil
	}
	if why := pl.refused(l); why != "" {
		state := stateUndeliverable
		if l.Sent > 0 {
			state = stateFailed
		}
		pl.stop(d, state, "", why)
		return nil
	}
	if pl.e.verify != nil && l.Sent == 0 && l.VerificationStatus == "unknown" && l.VerificationCheckedAt == nil &&
		l.VerificationSource == "" {
		pl.toVerify = append(pl.toVerify, l.ContactID)
		d.wait(now.Add(verifyRecheck), "verifying the address before the first send")
		return nil
	}
	if int(d.pos) >= len(pl.steps) {
		pl.stop(d, stateCompleted, "", "")
		return nil
	}
	if d.pos == 0 && l.Sent == 0 {
		entered := pl.row.CreatedAt
		if l.EnteredAt != nil {
			entered = *l.EnteredAt
		}
		if at := entered.Add(time.Duration(pl.row.EntryDelayMinutes) * time.Minute); at.After(now) {
			d.wait(at, ReasonEntryDelay)
			return nil
		}
	}
	step := pl.steps[d.pos]
	if l.LastStepAt != nil && d.pos > 0 {
		// The step's delay counts from the one before it, whatever made the lead due (a schedule change makes
		// every waiting lead due at once).
		if at := l.LastStepAt.AddDate(0, 0, int(step.WaitAfter)); at.After(now) {
			d.wait(at, ReasonFollowUp)
			return nil
		}
	}
	return kindOf(step).run(ctx, pl, d, step)
}

// refused says why a lead's address must not be sent to ("" when it may): suppressed, or a verdict the
// campaign does not send to (invalid always, risky unless risky_emails), with the verifier's reason.
func (pl *planner) refused(l *dbq.EngineDueLeadsRow) string {
	if s, ok := pl.suppress[l.Email]; ok {
		return "The address is suppressed (" + s.Value + ")."
	}
	switch {
	case l.VerificationStatus == "invalid":
		return withReason("Verification found the address invalid", l.VerificationReason)
	case l.VerificationStatus == "risky" && !pl.row.RiskyEmails:
		return withReason("Verification found the address risky and the campaign does not send to risky addresses (risky_emails)",
			l.VerificationReason)
	}
	return ""
}

// withReason ends a verdict's sentence with the verifier's reason for it, when there is one.
func withReason(verdict, reason string) string {
	if reason == "" {
		return verdict + "."
	}
	return verdict + ": " + reason
}

// stepKind runs one kind of step for a lead that reached it. app_action and wait_for_event run through the
// same interface once the agents work lands; until then the launch checks keep a campaign with one from
// starting, and a lead that reaches one anyway fails with the reason.
type stepKind interface {
	run(ctx context.Context, pl *planner, d *decision, step campaign.Step) error
}

func kindOf(step campaign.Step) stepKind {
	switch {
	case step.Kind == campaign.StepEmail:
		return emailStep{}
	case step.ActionType() == campaign.ActionWait:
		return waitStep{}
	case step.ActionType() == campaign.ActionForEvent:
		return waitEventStep{}
	}
	return unsupportedStep{}
}

// nextDue is when the step after a lead's step at now is due: its wait_after days later (nil when none follows).
func (pl *planner) nextDue(pos int32, from time.Time) *time.Time {
	if int(pos) >= len(pl.steps) {
		return nil
	}
	t := from.AddDate(0, 0, int(pl.steps[pos].WaitAfter))
	return &t
}

// waitStep holds the lead for its wait_minutes, then the next step's own delay.
type waitStep struct{}

func (waitStep) run(_ context.Context, pl *planner, d *decision, step campaign.Step) error {
	var a struct {
		WaitMinutes int `json:"wait_minutes"`
	}
	_ = json.Unmarshal(step.Action, &a)
	from := pl.now.Add(time.Duration(min(max(a.WaitMinutes, 0), campaign.MaxWaitMinutes)) * time.Minute)
	d.pos++
	d.last = &from // the next step's delay counts from the end of the wait
	if next := pl.nextDue(d.pos, from); next != nil {
		d.wait(*next, ReasonWaitStep)
		return nil
	}
	d.wait(from, ReasonWaitStep) // the sequence ends with the wait: the lead completes when it is over
	return nil
}

// unsupportedStep is a step kind this build cannot run.
type unsupportedStep struct{}

func (unsupportedStep) run(_ context.Context, pl *planner, d *decision, step campaign.Step) error {
	pl.stop(d, stateFailed, "", fmt.Sprintf("Step %d is a %s step, which campaigns cannot run yet.", step.Position+1, step.ActionType()))
	return nil
}

// emailStep composes the step for the lead and enqueues it from a free sender, or leaves the lead waiting
// with the reason.
type emailStep struct{}

func (emailStep) run(ctx context.Context, pl *planner, d *decision, step campaign.Step) error {
	l, now := d.lead, pl.now
	if cond, _ := campaign.ParseCondition(step.Conditions); !cond.Matches(l.Opened, l.Clicked, l.Replied) {
		if cond.Otherwise == campaign.ConditionStop {
			pl.stop(d, stateCompleted, ReasonConditionStop, "")
			return nil
		}
		d.pos++
		if d.due = pl.nextDue(d.pos, now); d.due == nil {
			pl.stop(d, stateCompleted, "", "")
			return nil
		}
		d.reason = ReasonConditionSkip
		return nil
	}
	if sto := pl.overrides.SendTimeOptimization; sto.Enabled {
		loc := pl.contactZone(l, sto)
		if at, ok := ContactSlot(now, loc, sto.PreferredHours, sto.WeekendWeightMultiplier, l.ContactID); ok && at.After(now) {
			d.wait(at, ReasonContactHours)
			return nil
		}
	}
	isNew := d.pos == 0 && l.Sent == 0
	switch {
	case pl.sendsLeft <= 0:
		d.wait(pl.tomorrow, pl.limitReason)
		return nil
	case isNew && pl.newLeft >= 0 && pl.newPlanned >= pl.newLeft:
		d.wait(pl.tomorrow, ReasonNewLeadQuota)
		return nil
	}
	esp := ContactESP(l.EspProvider)
	if esp == "" {
		esp = AddressESP(l.Email)
	}
	choice := Choice{Mode: pl.row.RotationMode, Cursor: pl.cursor, ESP: esp,
		ESPMode: pl.row.EspMatchMode, Contact: l.ContactID, Step: step.ID}
	if d.pos > 0 && l.MailboxID.Valid && pl.inPool(l.MailboxID.UUID) {
		choice.Only = l.MailboxID // the thread's follow-ups go from the mailbox that started it
	}
	idx, ok, reason, retry := pl.chooseSender(choice)
	if !ok {
		if retry.IsZero() {
			retry = now.Add(noSenderRecheck)
		}
		retry, reason = pl.lineUp(choice, isNew, reason, retry)
		d.wait(retry, reason)
		if reason == ReasonMailboxCap && pl.fullUntil.IsZero() {
			pl.fullUntil = pl.poolFullUntil()
		}
		return nil
	}
	content, variant := pl.variantOf(step, l.ContactID)
	contact, err := contactOf(l)
	if err != nil {
		return err
	}
	sender := &pl.mailboxes[idx]
	// The task's id is chosen here, not by the enqueue, because the tracking tokens composed into it name it.
	task, err := uuid.NewV7()
	if err != nil {
		return err
	}
	unsub, err := pl.unsubscribe(sender, task)
	if err != nil {
		return err
	}
	msg, err := compose.Compose(compose.Input{Campaign: &pl.row, Steps: pl.steps, Step: &step, Content: content,
		Contact: contact, Sender: sender, Tracking: pl.tracking(sender, task), Unsubscribe: unsub})
	if err == nil {
		err = msg.Sendable()
	}
	if err != nil {
		pl.stop(d, stateFailed, "", fmt.Sprintf("Step %d could not be composed for this contact: %s", step.Position+1, err.Error()))
		return nil
	}
	files, err := pl.stepFiles(ctx, step.ID)
	if err != nil {
		return err
	}
	out := sending.Message{ID: task, Kind: sending.KindCampaign, To: []string{l.Email}, Cc: pl.row.Cc, Bcc: pl.row.Bcc,
		Subject: msg.Subject, Text: msg.Plain, HTML: msg.HTML, Signed: msg.Signed, Attachments: files,
		ContactID: uuid.NullUUID{UUID: l.ContactID, Valid: true}, CampaignID: uuid.NullUUID{UUID: pl.row.ID, Valid: true},
		StepID: uuid.NullUUID{UUID: step.ID, Valid: true}, StepName: step.Name, VariantID: variant, NotBefore: now}
	if unsub != nil && pl.row.UnsubscribeHeader {
		out.UnsubscribeURL = unsub.URL
	}
	if msg.ThreadReply && len(l.ThreadRefs) > 0 {
		out.InReplyTo, out.References = l.ThreadRefs[len(l.ThreadRefs)-1], l.ThreadRefs
	}
	s := &pl.senders[idx]
	s.Used++
	s.Slot = now.Add(s.Gap)
	pl.project(idx)
	pl.cursor = uint64(idx + 1)
	pl.sendsLeft--
	if isNew {
		pl.newPlanned++
	}
	d.send, d.sender, d.isNew = &out, idx, isNew
	d.mailbox, d.variant = uuid.NullUUID{UUID: s.ID, Valid: true}, variant
	d.pos++
	d.last = &pl.now
	d.due, d.reason = pl.nextDue(d.pos, now), ""
	if d.due != nil {
		d.reason = ReasonFollowUp
	}
	return nil
}

// tracking is the tracking input of a message to be sent as task from sender: nil when the deployment has no
// signer or the campaign tracks neither opens nor clicks (compose applies each setting itself).
func (pl *planner) tracking(sender *dbq.Mailbox, task uuid.UUID) *compose.Tracking {
	t := pl.e.tracking
	if t.Signer == nil || !pl.row.OpenTracking && !pl.row.LinkTracking {
		return nil
	}
	return &compose.Tracking{Signer: t.Signer, BaseURL: compose.TrackingBaseURL(&pl.row, sender, t.Host, t.PublicURL),
		OrganizationID: pl.org, TaskID: task}
}

// lineUp is when a lead that found every sender busy until retry looks again, and why. Such leads line up:
// each takes the next slot the pool opens for it (a mailbox's gap end, after the leads of this pass lined up
// there before it), so they wake a slot at a time rather than all at the pool's earliest slot, which made
// every waiting lead be planned again for each send. A lead whose place in line is past what the campaign
// may still send today (its daily limit, ramp or new-lead quota) waits for tomorrow.
func (pl *planner) lineUp(c Choice, isNew bool, reason string, retry time.Time) (time.Time, string) {
	switch {
	case reason != ReasonGap:
		return retry, reason
	case pl.linedSends >= pl.sendsLeft:
		return pl.tomorrow, pl.limitReason
	case isNew && pl.newLeft >= 0 && pl.newPlanned+pl.linedNew >= pl.newLeft:
		return pl.tomorrow, ReasonNewLeadQuota
	}
	if pl.line == nil {
		pl.lined = make([]int32, len(pl.senders))
		pl.line = make([]Sender, len(pl.senders))
		for i := range pl.senders {
			pl.project(i)
		}
	}
	_, _, why, at := ChooseSender(pl.line, c, pl.now)
	idx, ok, _, _ := ChooseSender(pl.line, c, at)
	if at.IsZero() || !ok {
		return cmp.Or(at, retry), cmp.Or(why, reason) // the line reaches past the day's caps: the day's end
	}
	pl.lined[idx]++
	pl.project(idx)
	pl.linedSends++
	if isNew {
		pl.linedNew++
	}
	return at, why
}

// chooseSender is ChooseSender over the pass's pool at its now. Once a choice open to the whole pool found no
// sender free, none is for the rest of the pass (senders only get busier as it plans), so later such choices
// take that answer rather than walking the pool again.
func (pl *planner) chooseSender(c Choice) (int, bool, string, time.Time) {
	whole := !c.Only.Valid && (c.ESPMode != "strict" || c.ESP == "")
	if whole && pl.noneFree != "" {
		return 0, false, pl.noneFree, pl.noneRetry
	}
	idx, ok, reason, retry := ChooseSender(pl.senders, c, pl.now)
	if whole && !ok {
		pl.noneFree, pl.noneRetry = reason, retry
	}
	return idx, ok, reason, retry
}

// poolFullUntil is, when every usable sender of the pool has today's cap taken (sent, planned or lined up),
// the earliest time one of them starts a new day; otherwise the zero time. Until then no lead of the campaign
// can be sent.
func (pl *planner) poolFullUntil() time.Time {
	view := pl.line
	if view == nil {
		view = pl.senders
	}
	var until time.Time
	for _, s := range view {
		switch {
		case s.Disabled:
		case s.Used < s.Cap:
			return time.Time{}
		case until.IsZero() || s.DayEnds.Before(until):
			until = s.DayEnds
		}
	}
	return until
}

// project brings the line's view of sender i up to date: the sender as it is, with the slots of the leads
// lined up there taken.
func (pl *planner) project(i int) {
	if pl.line == nil {
		return
	}
	s := pl.senders[i]
	s.Used += pl.lined[i]
	s.Slot = s.Slot.Add(time.Duration(pl.lined[i]) * s.Gap)
	pl.line[i] = s
}

// inPool reports whether the mailbox is in the campaign's usable pool.
func (pl *planner) inPool(id uuid.UUID) bool {
	for _, s := range pl.senders {
		if s.ID == id {
			return !s.Disabled
		}
	}
	return false
}

// variantOf chooses the contact's A/B variant of a step (the step's own variants; the first email step also
// takes the campaign-wide ones when it has none) and the content it sends (nil: the step's own, for the
// control or when no variant is drawn). A variant's empty subject or body keeps the step's.
func (pl *planner) variantOf(step campaign.Step, contact uuid.UUID) (*compose.Content, uuid.NullUUID) {
	vs := pl.variants[step.ID]
	if len(vs) == 0 && step.ID == pl.firstStep {
		vs = pl.variants[uuid.Nil]
	}
	choices := make([]Variant, len(vs))
	for i, v := range vs {
		choices[i] = Variant{ID: v.ID, Weight: v.Weight, Promoted: v.PromotedAt != nil}
	}
	i, ok := ChooseVariant(choices, contact, step.ID)
	if !ok {
		return nil, uuid.NullUUID{}
	}
	v := vs[i]
	id := uuid.NullUUID{UUID: v.ID, Valid: true}
	if v.IsControl {
		return nil, id
	}
	c := &compose.Content{Subject: v.Subject, Plain: v.BodyPlain, HTML: v.BodyHtml}
	if c.Subject == "" {
		c.Subject = step.Subject
	}
	if c.Plain == "" && c.HTML == "" {
		c.Plain, c.HTML = step.BodyPlain, step.BodyHTML
	}
	return c, id
}

// stepFiles are the attachment ids a step sends, read once per pass.
func (pl *planner) stepFiles(ctx context.Context, step uuid.UUID) ([]uuid.UUID, error) {
	if ids, ok := pl.files[step]; ok {
		return ids, nil
	}
	files, err := compose.StepFiles(ctx, pl.tx, pl.org, pl.row.ID, uuid.NullUUID{UUID: step, Valid: true})
	if err != nil {
		return nil, err
	}
	pl.files[step] = compose.IDs(files)
	return pl.files[step], nil
}

// contactZone is the zone send-time optimisation reads a contact's clock in: the contact's "timezone" custom
// field when use_contact_timezone is on and it names a zone, else default_contact_timezone, else the campaign's.
func (pl *planner) contactZone(l *dbq.EngineDueLeadsRow, sto campaign.SendTimeOptimization) *time.Location {
	if sto.UseContactTimezone {
		var custom map[string]any
		if json.Unmarshal(l.CustomFields, &custom) == nil {
			if tz, ok := custom["timezone"].(string); ok {
				if loc, err := campaign.Location(tz); err == nil {
					return loc
				}
			}
		}
	}
	if sto.DefaultContactTimezone != "" {
		if loc, err := campaign.Location(sto.DefaultContactTimezone); err == nil {
			return loc
		}
	}
	return pl.loc
}
