package handlers_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/platform/config"
)

// A human click's effects wait for the burst window plus a second, run by a worker; a burst that follows in
// time cancels them. These tests run on real time with a burst window of 5 s (effects after 6 s): short, and
// long enough for a loaded machine to look before the effects are due.

// clickEffects reads task's clicks in time order: when each was made, when its effects were due and applied.
func (r *trackRig) clickEffects(t *testing.T, task uuid.UUID) (at []time.Time, due, applied []*time.Time) {
	t.Helper()
	require.NoError(t, r.env.Tracking.Flush(context.Background()))
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT at, effects_due_at, effects_applied_at FROM tracking_events
			WHERE organization_id = $1 AND task_id = $2 AND kind = 'click' ORDER BY at, id`, r.org, task)
		if err != nil {
			return err
		}
		var a time.Time
		var d, p *time.Time
		_, err = pgx.ForEachRow(rows, []any{&a, &d, &p}, func() error {
			at, due, applied = append(at, a), append(due, d), append(applied, p)
			return nil
		})
		return err
	})
	return at, due, applied
}

func TestTrackingAHumanClicksEffectsApplyOnlyAfterTheBurstWindowPlusASecond(t *testing.T) {
	t.Parallel()
	r := newTrackRig(t, func(c *config.Config) { c.ClickBurstWindow = 5 * time.Second })
	r.env.StartWorkers(t)
	task := r.send(t, time.Now().Add(-time.Hour))

	r.click(t, time.Time{}, task, 0, fromReader, browserUA)
	at, due, applied := r.clickEffects(t, task)
	require.Len(t, at, 1)
	require.Equal(t, at[0].Add(6*time.Second), *due[0], "the effects are due 5 s (burst window) + 1 s after the click")
	require.Nil(t, applied[0])
	_, clicked := r.stamps(t, task)
	require.Nil(t, clicked, "clicked_at waits")
	require.Zero(t, r.progress(t).Clicked)
	require.Empty(t, r.eventData(t, "campaign.email_clicked"), "campaign.email_clicked waits")

	require.Eventually(t, func() bool { _, clicked = r.stamps(t, task); return clicked != nil }, 30*time.Second, 100*time.Millisecond)
	require.True(t, at[0].Equal(*clicked), "clicked_at is the click's time")
	_, _, applied = r.clickEffects(t, task)
	require.False(t, applied[0].Before(*due[0]), "applied at %s, due at %s", applied[0], due[0])
	p := r.progress(t)
	require.Equal(t, 1, p.Clicked)
	require.True(t, p.LastActivityAt.Set)
	require.WithinDuration(t, at[0], p.LastActivityAt.Value, time.Second, "the click is the lead's last activity (the API answers to the second)")
	events := r.eventData(t, "campaign.email_clicked")
	require.Len(t, events, 1)
	require.Equal(t, map[string]any{"campaign_id": r.camp.String(), "campaign_name": "Spring launch",
		"contact_id": r.lead.String(), "email": "ada@example.net", "step_id": r.step.String(), "step_name": "Step 1",
		"task_id": task.String(), "message_id": "<" + task.String() + "@acme.example>", "mailbox_id": r.box.String(),
		"email_account_id": r.box.String(), "from_email": "sales@acme.example", "url": trackedPricing,
		"link_label": "See our pricing", "clicked_at": at[0].UTC().Format(time.RFC3339Nano)}, events[0])

	// A later click on the other link, outside the burst window: another event with its own link, no second count.
	r.click(t, at[0].Add(5*time.Second+time.Millisecond), task, 1, fromReader, browserUA)
	require.Eventually(t, func() bool { return len(r.eventData(t, "campaign.email_clicked")) == 2 }, 30*time.Second, 100*time.Millisecond)
	second := r.eventData(t, "campaign.email_clicked")[1]
	require.Equal(t, trackedDemo, second["url"])
	require.Equal(t, "Book a demo", second["link_label"], "an image link is labelled by its alt text")
	_, again := r.stamps(t, task)
	require.True(t, clicked.Equal(*again), "clicked_at keeps the first human click")
	require.Equal(t, 1, r.progress(t).Clicked, "a send's clicks count once")
	require.Equal(t, []string{`email_clicked "` + trackedPricing + `" "See our pricing"`, `email_clicked "` + trackedDemo + `" "Book a demo"`},
		r.emailActivities(t))
}

func TestTrackingABurstBeforeTheEffectsAreDueCancelsTheEarlierClicksEffects(t *testing.T) {
	t.Parallel()
	r := newTrackRig(t, func(c *config.Config) { c.ClickBurstWindow = 5 * time.Second })
	r.env.StartWorkers(t)
	task := r.send(t, time.Now().Add(-time.Hour))

	first := time.Now()
	r.click(t, first, task, 0, fromReader, browserUA)
	require.Equal(t, []judged{{Kind: "click", Link: 0, Verdict: "human", Rule: "human", Ticket: true}}, r.judgements(t, task),
		"alone, the first click is a person's and its effects are pending")
	r.click(t, first.Add(4900*time.Millisecond), task, 1, fromReader, browserUA)
	require.Equal(t, []judged{
		{Kind: "click", Link: 0, Verdict: "machine", Rule: "burst", Ticket: true},
		{Kind: "click", Link: 1, Verdict: "machine", Rule: "burst", Ticket: true},
	}, r.judgements(t, task), "the second link within the burst window re-judges the first click")

	// The first click's job still runs when due; it must find nothing to apply.
	require.Eventually(t, func() bool {
		var done bool
		require.NoError(t, r.env.DB.OwnerPool(t).QueryRow(context.Background(), `SELECT count(*) = 1 FROM river_job
			WHERE kind = 'tracking_click_effects' AND state = 'completed'`).Scan(&done))
		return done
	}, 30*time.Second, 100*time.Millisecond)
	_, clicked := r.stamps(t, task)
	require.Nil(t, clicked)
	require.Zero(t, r.progress(t).Clicked)
	require.Empty(t, r.eventData(t, "campaign.email_clicked"), "a burst's clicks never fire campaign.email_clicked")
	require.Empty(t, r.emailActivities(t))
	_, due, applied := r.clickEffects(t, task)
	require.Equal(t, []*time.Time{nil, nil}, due, "no effects are pending")
	require.Equal(t, []*time.Time{nil, nil}, applied)
}
