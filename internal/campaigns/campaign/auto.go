package campaign

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// Move changes a campaign's status on the engine's own decision (completed when its leads are done or its end
// date passed, paused_no_accounts when no sender is left, active again when a lead arrives after it completed),
// with the reason, and raises the lifecycle event, activity-log line and audit entry a person's change raises
// (the audit entry's actor is the system when ctx carries no principal). A pause cancels the queued sends (their
// leads go back to their step). row is the campaign as locked by the caller.
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
		if _, err := cancelQueued(ctx, tx, dbq.CampaignTasksCancelParams{OrganizationID: row.OrganizationID,
			CampaignID: uuid.NullUUID{UUID: row.ID, Valid: true}, ErrorCode: "campaign_paused",
			Reason: "The campaign was paused before this message was sent: " + reason}); err != nil {
			return Campaign{}, err
		}
	}
	out, err := s.Get(ctx, tx, row.OrganizationID, row.ID)
	if err != nil {
		return Campaign{}, err
	}
	if t := lifecycleEvent(to); t != "" {
		if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: string(t), EntityType: audit.EntityCampaign,
			EntityID: row.ID.String(), Metadata: map[string]any{"from": row.Status, "reason": reason}}); err != nil {
			return Campaign{}, err
		}
	}
	return out, s.moved(ctx, tx, out, row.Status, reason)
}

// cancelQueued cancels the campaign's queued sends and puts their leads back at their steps
// (CampaignTasksCancel), and gives each cancelled send's place back as a failed one does (the engine's settle
// hook): in the campaign's day it was planned on, with that day's new leads for a first step, and in its
// mailbox's plan. Otherwise a campaign stopped and started again the same day would find its daily limit and
// its mailboxes' caps taken by sends that never went out; the campaign's park (its day full) ends first. It
// answers how many sends were cancelled.
func cancelQueued(ctx context.Context, tx pgx.Tx, p dbq.CampaignTasksCancelParams) (int, error) {
	if err := queries.EngineCampaignUnpark(ctx, tx, dbq.EngineCampaignUnparkParams{OrganizationID: p.OrganizationID,
		ID: p.CampaignID.UUID}); err != nil {
		return 0, err
	}
	rows, err := queries.CampaignTasksCancel(ctx, tx, p)
	if err != nil {
		return 0, err
	}
	type planDay struct {
		mailbox uuid.UUID
		day     time.Time
	}
	type counts struct{ sends, firstSteps int32 }
	days := map[time.Time]counts{}
	plans := map[planDay]int32{}
	var order []planDay // in mailbox order (as the rows come), the order the engine locks plans in: no deadlock
	for _, r := range rows {
		if r.PlannedAt == nil {
			continue
		}
		loc, err := Location(r.CampaignTimezone)
		if err != nil {
			loc = time.UTC // as the engine plans a campaign whose zone no longer loads
		}
		y, m, d := r.PlannedAt.In(loc).Date()
		day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		c := days[day]
		c.sends++
		if r.FirstStep {
			c.firstSteps++
		}
		days[day] = c
		if r.MailboxID.Valid {
			k := planDay{r.MailboxID.UUID, sending.MailboxDay(*r.PlannedAt, r.MailboxTimezone)}
			if _, ok := plans[k]; !ok {
				order = append(order, k)
			}
			plans[k]++
		}
	}
	for day, c := range days {
		if err := queries.EngineCampaignDayAdd(ctx, tx, dbq.EngineCampaignDayAddParams{OrganizationID: p.OrganizationID,
			CampaignID: p.CampaignID.UUID, Day: day, Sent: -c.sends, NewLeads: -c.firstSteps}); err != nil {
			return 0, err
		}
	}
	for _, k := range order {
		if err := queries.EnginePlanCredit(ctx, tx, dbq.EnginePlanCreditParams{OrganizationID: p.OrganizationID,
			MailboxID: k.mailbox, Day: k.day, Sends: plans[k]}); err != nil {
			return 0, err
		}
	}
	return len(rows), nil
}
