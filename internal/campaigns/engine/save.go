package engine

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/mail/sending"
)

// enqueue hands the pass's sends to the send pipeline in one EnqueueMany, in the pass's transaction, and notes
// each send's task and Message-ID on its decision. It answers how many were enqueued.
func (pl *planner) enqueue(ctx context.Context) (int, error) {
	var ds []*decision
	var out []sending.Outgoing
	for i := range pl.decisions {
		if d := &pl.decisions[i]; d.send != nil {
			ds = append(ds, d)
			out = append(out, sending.Outgoing{From: &pl.mailboxes[d.sender], Message: *d.send})
		}
	}
	if len(out) == 0 {
		return 0, nil
	}
	tasks, err := sending.EnqueueMany(ctx, pl.tx, pl.jobs, out)
	if err != nil {
		return 0, err
	}
	for i, t := range tasks {
		ds[i].task, ds[i].ref = t.ID, t.MessageID
	}
	return len(tasks), nil
}

// save writes the pass: every lead's decision, the new Message-IDs of the conversations, the mailboxes' plans,
// the campaign's day counters, ramp and rotation, the activity log of leads that ended, the addresses to check,
// and the campaign's completion when its last lead ended.
func (pl *planner) save(ctx context.Context, day time.Time, level int32) error {
	n := len(pl.decisions)
	p := dbq.EngineLeadsSaveParams{OrganizationID: pl.org, CampaignID: pl.row.ID,
		ContactIds: make([]uuid.UUID, n), States: make([]string, n), StepPositions: make([]int32, n),
		HasDue: make([]bool, n), DueAts: make([]time.Time, n), WaitReasons: make([]string, n),
		TaskIds: make([]uuid.UUID, n), MailboxIds: make([]uuid.UUID, n), VariantIds: make([]uuid.UUID, n),
		HasLast: make([]bool, n), LastStepAts: make([]time.Time, n), Attempts: make([]int16, n),
		FailureReasons: make([]string, n), HoldsLifted: make([]bool, n), Refs: make([]string, n)}
	sends, newLeads := 0, 0
	for i, d := range pl.decisions {
		p.ContactIds[i], p.States[i], p.StepPositions[i] = d.lead.ContactID, d.state, d.pos
		if d.due != nil {
			p.HasDue[i], p.DueAts[i] = true, *d.due
		}
		if d.last != nil {
			p.HasLast[i], p.LastStepAts[i] = true, *d.last
		}
		p.WaitReasons[i], p.TaskIds[i], p.MailboxIds[i], p.VariantIds[i] = d.reason, d.task, d.mailbox.UUID, d.variant.UUID
		p.Attempts[i], p.FailureReasons[i], p.HoldsLifted[i] = d.attempts, d.failure, d.holdLifted
		if d.send != nil {
			p.Refs[i] = d.ref
			sends++
			if d.isNew {
				newLeads++
			}
		}
	}
	if err := queries.EngineLeadsSave(ctx, pl.tx, p); err != nil {
		return err
	}
	if sends > 0 {
		if err := pl.savePlans(ctx); err != nil {
			return err
		}
		if err := queries.EngineCampaignDayAdd(ctx, pl.tx, dbq.EngineCampaignDayAddParams{OrganizationID: pl.org,
			CampaignID: pl.row.ID, Day: day, Sent: int32(sends), NewLeads: int32(newLeads)}); err != nil {
			return err
		}
	}
	ran := dbq.EngineCampaignRanParams{OrganizationID: pl.org, ID: pl.row.ID, At: pl.now, RampLevel: pl.row.RampLevel,
		RampDay: pl.row.RampDay, RotationCursor: int64(min(pl.cursor, 1<<62)), IdleSince: pl.row.IdleSince}
	if sends > 0 {
		ran.RampLevel, ran.RampDay, ran.IdleSince = level, &day, nil
	}
	if err := queries.EngineCampaignRan(ctx, pl.tx, ran); err != nil {
		return err
	}
	if err := pl.logEnded(ctx); err != nil {
		return err
	}
	if len(pl.toVerify) > 0 {
		if err := pl.e.verify.RequestTx(ctx, pl.tx, pl.jobs, pl.org, pl.toVerify); err != nil {
			return err
		}
	}
	if pl.ended {
		return completeIfDone(ctx, pl.pass.store, pl.tx, pl.org, pl.row.ID, pl.now)
	}
	return nil
}

// savePlans writes what this pass planned on each mailbox it sent from.
func (pl *planner) savePlans(ctx context.Context) error {
	var ids []uuid.UUID
	var days, until []time.Time
	var planned []int32
	sent := map[int]bool{}
	for _, d := range pl.decisions {
		if d.send != nil {
			sent[d.sender] = true
		}
	}
	for i, s := range pl.senders {
		if !sent[i] {
			continue
		}
		ids = append(ids, s.ID)
		days = append(days, sending.MailboxDay(pl.now, pl.mailboxes[i].Timezone))
		planned = append(planned, s.Used)
		until = append(until, s.Slot.Add(-s.Gap))
	}
	return queries.EnginePlansSave(ctx, pl.tx, dbq.EnginePlansSaveParams{OrganizationID: pl.org, MailboxIds: ids,
		Days: days, Planned: planned, PlannedUntil: until})
}

// logEnded writes an activity-log line for each lead this pass failed or found undeliverable.
func (pl *planner) logEnded(ctx context.Context) error {
	for _, d := range pl.decisions {
		var kind string
		switch {
		case d.state == stateFailed && d.lead.State != stateFailed:
			kind = "lead_failed"
		case d.state == stateUndeliverable && d.lead.State != stateUndeliverable:
			kind = "lead_undeliverable"
		default:
			continue
		}
		if err := campaign.Log(ctx, pl.tx, pl.org, pl.row.ID, uuid.NullUUID{UUID: d.lead.ContactID, Valid: true}, kind,
			d.lead.Email+": "+d.failure, nil); err != nil {
			return err
		}
	}
	return nil
}

// completeIfDone completes an active campaign none of whose leads has anything left to do; a continuous one
// stays active and records since when it has been idle. It locks the campaign before it counts the open leads:
// two leads ending in transactions at once would each see the other still open, and neither would complete it.
func completeIfDone(ctx context.Context, store *campaign.Store, tx pgx.Tx, org, id uuid.UUID, now time.Time) error {
	row, err := queries.CampaignGetForUpdate(ctx, tx, dbq.CampaignGetForUpdateParams{OrganizationID: org, ID: id})
	if err != nil || row.Status != campaign.StatusActive {
		return err
	}
	open, err := queries.EngineLeadsOpen(ctx, tx, dbq.EngineLeadsOpenParams{OrganizationID: org, CampaignID: id})
	if err != nil || open {
		return err
	}
	if row.Continuous {
		return queries.EngineCampaignIdle(ctx, tx, dbq.EngineCampaignIdleParams{OrganizationID: org, ID: id, At: now})
	}
	_, err = store.Move(ctx, tx, row, campaign.StatusCompleted, "every lead finished the sequence")
	return err
}
