package rollup_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/analytics/rollup"
	"github.com/outflowhq/outflow/internal/platform/db"
)

func (r *rig) tx(t testing.TB, f func(ctx context.Context, tx pgx.Tx) error) {
	t.Helper()
	require.NoError(t, db.WithOrgTx(context.Background(), r.d.Pool, r.org, f))
}

func (r *rig) event(t testing.TB, task uuid.UUID, kind, verdict string, at time.Time) uuid.UUID {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	link, url := any(nil), any(nil)
	if kind == "click" {
		link, url = 0, "https://example.com/"
	}
	r.exec(t, `INSERT INTO tracking_events (organization_id, id, task_id, kind, at, verdict, rule, link_index, url)
		VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8)`, r.org, id, task, kind, at, verdict, link, url)
	return id
}

func TestCountCountsWhatABatchChangedAndARebuildAgrees(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	camp, box, task := r.campaign(t, "Launch"), uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	r.exec(t, `INSERT INTO mailboxes (organization_id, id, email, provider) VALUES ($1, $2, 'ada@acme.example', 'outlook')`, r.org, box)
	sent := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r.exec(t, `INSERT INTO send_tasks (organization_id, id, kind, status, mailbox_id, to_email, campaign_id, step_id, sent_at)
		VALUES ($1, $2, 'campaign', 'sent', $3, 'bob@example.net', $4, gen_random_uuid(), $5)`, r.org, task, box, camp, sent)
	r.tx(t, func(ctx context.Context, tx pgx.Tx) error { return rollup.Sent(ctx, tx, r.org, task) })
	// Each batch stores its events as the tracking writer would and counts the send's engagement before and
	// after it.
	st := rollup.Engagement{Kind: rollup.KindCampaign, Campaign: camp, Mailbox: box, Provider: "outlook"}
	require.NoError(t, r.owner.QueryRow(context.Background(), `SELECT step_id FROM send_tasks WHERE id = $1`, task).Scan(&st.Step))
	batch := func(f func(), next func(rollup.Engagement) rollup.Engagement) {
		f()
		after := next(st)
		r.tx(t, func(ctx context.Context, tx pgx.Tx) error {
			return rollup.Count(ctx, tx, r.org, []rollup.Change{{Before: st, After: after}})
		})
		st = after
	}
	org := func() string { return r.snapshot(t)["analytics_org_days 2026-03-03 campaign"] }

	// A machine's open on the 3rd, then a person's click the same day: one machine-only open, one click.
	machineOpen, clickAt := sent.Add(48*time.Hour), sent.Add(49*time.Hour)
	batch(func() { r.event(t, task, "open", "machine", machineOpen) },
		func(e rollup.Engagement) rollup.Engagement { return e.Open(machineOpen, false) })
	require.Equal(t, "[0 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0]", org())
	click := uuid.Nil
	batch(func() { click = r.event(t, task, "click", "human", clickAt) },
		func(e rollup.Engagement) rollup.Engagement { return e.Click(clickAt, true) })
	require.Equal(t, "[0 1 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0]", org())
	// A second open by the machine changes nothing.
	batch(func() { r.event(t, task, "open", "machine", machineOpen.Add(time.Hour)) },
		func(e rollup.Engagement) rollup.Engagement { return e.Open(machineOpen.Add(time.Hour), false) })
	require.Equal(t, "[0 1 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0]", org())
	// A burst re-judges the click a machine's: the send is clicked by machines only.
	batch(func() {
		r.exec(t, `UPDATE tracking_events SET verdict = 'machine', rule = 'burst' WHERE id = $1`, click)
	}, rollup.Engagement.Rejudge)
	require.Equal(t, "[0 1 1 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0]", org())
	// A person's open reported late with an earlier time (the 2nd): the open moves to the 2nd, now a person's.
	early := sent.Add(24 * time.Hour)
	batch(func() { r.event(t, task, "open", "human", early) },
		func(e rollup.Engagement) rollup.Engagement { return e.Open(early, true) })
	snap := r.snapshot(t)
	require.Equal(t, "[0 0 0 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0]", snap["analytics_org_days 2026-03-03 campaign"])
	require.Equal(t, "[0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0]", snap["analytics_org_days 2026-03-02 campaign"])
	require.Equal(t, "[1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0]", snap["analytics_mailbox_days "+box.String()+" 2026-03-01 campaign outlook"])

	// A complaint naming only the campaign, a reply and its intent.
	ev := uuid.Must(uuid.NewV7())
	r.exec(t, `INSERT INTO deliverability_events (organization_id, id, event_type, source, at, recipient_email, campaign_id)
		VALUES ($1, $2, 'complaint', 'ingest', $3, 'bob@example.net', $4)`, r.org, ev, sent.Add(72*time.Hour), camp)
	r.exec(t, `UPDATE send_tasks SET replied_at = $3 WHERE organization_id = $1 AND id = $2`, r.org, task, sent.Add(72*time.Hour))
	msg, thread := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	r.exec(t, `INSERT INTO inbox_threads (organization_id, id, mailbox_id, last_message_at) VALUES ($1, $2, $3, $4)`,
		r.org, thread, box, sent)
	r.exec(t, `INSERT INTO inbox_messages (organization_id, id, mailbox_id, thread_id, folder, folder_role, uid_validity, uid,
		received_at, intent, send_task_id, campaign_id) VALUES ($1, $2, $3, $4, 'INBOX', 'inbox', 1, 1, $5, 'question', $6, $7)`,
		r.org, msg, box, thread, sent.Add(72*time.Hour), task, camp)
	r.tx(t, func(ctx context.Context, tx pgx.Tx) error {
		if err := rollup.Events(ctx, tx, r.org, ev); err != nil {
			return err
		}
		if err := rollup.Replied(ctx, tx, r.org, task); err != nil {
			return err
		}
		return rollup.Intents(ctx, tx, r.org, msg)
	})
	fed := r.snapshot(t)
	require.Equal(t, "[0 0 0 0 0 1 0 0 1 0 0 0 0 0 1 0 0 0]", fed["analytics_org_days 2026-03-04 campaign"])
	require.Equal(t, "[0 0 0 0 0 1 0 0 1 0 0 0 0 0 0 0 0 0]", fed["analytics_mailbox_days "+box.String()+" 2026-03-04 campaign outlook"],
		"the complaint names no send, so no mailbox")

	r.tx(t, func(ctx context.Context, tx pgx.Tx) error { return rollup.Rebuild(ctx, tx, r.org) })
	require.Equal(t, fed, r.snapshot(t), "a rebuild from the source rows equals what the feeds added up")
}
