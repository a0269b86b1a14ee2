package tracking

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/analytics/rollup"
)

// countRollups counts in the analytics rollups what a batch changed: each send's engagement as the batch found
// it (read with the sends, under the organization's tracking lock, so no other batch moved it in between) and
// as the batch leaves it (its events with their verdicts, and the person's clicks it re-judged a burst). A
// first open or click counts, a person's open or click takes a machine-only send back, a re-judged click may
// give one; no event is read back from the database for it.
func countRollups(ctx context.Context, tx pgx.Tx, org uuid.UUID, evs []Received, decisions []Decision,
	tasks map[uuid.UUID]dbq.TrackingTasksRow, near []dbq.TrackingClicksNearRow, rejudged []uuid.UUID) error {
	after := make(map[uuid.UUID]rollup.Engagement, len(tasks))
	var order []uuid.UUID
	current := func(t dbq.TrackingTasksRow) rollup.Engagement {
		e, ok := after[t.ID]
		if !ok {
			e = engagementOf(t)
			order = append(order, t.ID)
		}
		return e
	}
	for i, ev := range evs {
		t, ok := tasks[ev.Token.TaskID]
		if !ok {
			continue
		}
		human := decisions[i].Verdict == VerdictHuman
		if ev.Token.Kind == KindClick {
			after[t.ID] = current(t).Click(ev.At, human)
		} else {
			after[t.ID] = current(t).Open(ev.At, human)
		}
	}
	if len(rejudged) > 0 {
		re := make(map[uuid.UUID]bool, len(rejudged))
		for _, id := range rejudged {
			re[id] = true
		}
		for _, c := range near {
			if t, ok := tasks[c.TaskID]; ok && re[c.ID] {
				after[t.ID] = current(t).Rejudge()
			}
		}
	}
	changes := make([]rollup.Change, len(order))
	for i, id := range order {
		changes[i] = rollup.Change{Before: engagementOf(tasks[id]), After: after[id]}
	}
	return rollup.Count(ctx, tx, org, changes)
}

// engagementOf is what the send t's stored opens and clicks count in the rollups.
func engagementOf(t dbq.TrackingTasksRow) rollup.Engagement {
	return rollup.Engagement{Kind: t.RollupKind, Campaign: t.CampaignID.UUID, Step: t.StepID.UUID, Variant: t.VariantID.UUID,
		Mailbox: t.MailboxID.UUID, Provider: t.Provider, Opened: t.Opened, HumanOpen: t.HumanOpen,
		FirstOpen: t.FirstOpen, Clicked: t.Clicked, FirstClick: t.FirstClick, HumanClicks: int(t.HumanClicks)}
}
