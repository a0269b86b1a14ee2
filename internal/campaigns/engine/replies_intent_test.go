package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/campaigns/unsubscribe"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/eventing/notify"
	"github.com/outflowhq/outflow/internal/inbox/classify"
	"github.com/outflowhq/outflow/internal/inbox/replies"
	"github.com/outflowhq/outflow/internal/mail/dsn"
	"github.com/outflowhq/outflow/internal/mail/mailsync"
)

// crmFake records the CRM tasks the hook asks for.
type crmFake struct{ tasks []replies.Task }

func (c *crmFake) CreateForReply(_ context.Context, _ pgx.Tx, t replies.Task) error {
	c.tasks = append(c.tasks, t)
	return nil
}

// classified tells the inbox's reply hook a synced message, as the composition root installs it.
func (r *rig) classified(t testing.TB, crm replies.CRMTasks, m mailsync.Inbound) {
	t.Helper()
	m.OrganizationID, m.MailboxID = r.org, r.box.ID
	m.ID, m.ThreadID = uuid.New(), uuid.New()
	m.MessageID = "<" + uuid.NewString() + "@client.example>"
	if m.ReceivedAt.IsZero() {
		m.ReceivedAt = r.clock
	}
	rules, err := classify.NewRules()
	require.NoError(t, err)
	outbox := events.NewOutbox(r.jobs)
	hook := replies.New(r.eng, unsubscribe.New(r.env.DB.Pool, nil, outbox), rules, crm)
	r.query(t, func(ctx context.Context, tx pgx.Tx) error { return hook.Inbound(ctx, tx, outbox, m) })
}

// fields are one key of each event of a type, oldest first.
func (r *rig) fields(t testing.TB, typ events.Type, key string) []string {
	t.Helper()
	var out []string
	for _, d := range r.eventData(t, typ) {
		v, _ := d[key].(string)
		out = append(out, v)
	}
	return out
}

func TestClassifiedRepliesMoveTheirLeadsAsTheirIntentSays(t *testing.T) {
	r := newRig(t)
	leads := []string{"pos@example.net", "neg@example.net", "away@example.net", "auto@example.net", "unsub@example.net", "bounce@example.net"}
	id := r.campaign(t, twoSteps(), leads...)
	r.exec(t, `UPDATE campaigns SET stop_on_reply = false, advanced = '{"reply_intent": {"enabled": true, "hold_on_out_of_office": true,
		"out_of_office_hold_days": 7, "auto_pause_on_negative": true, "auto_suppress_on_unsubscribe_keyword": true,
		"auto_create_crm_task": true, "crm_task_intents": ["positive"]}}' WHERE id = $1`, id)
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		var owner uuid.NullUUID
		if err := tx.QueryRow(ctx, `SELECT user_id FROM campaigns WHERE id = $1`, id).Scan(&owner); err != nil {
			return err
		}
		users, err := campaign.Owners(ctx, tx, r.org, owner)
		on := notify.Choice{Enabled: true, Channels: notify.Channels{InApp: true}}
		for _, u := range users {
			if _, err := notify.Save(ctx, tx, u, map[notify.Category]notify.Choice{notify.InboundReply: on, notify.InboundOutOfOffice: on}, 30); err != nil {
				return err
			}
		}
		return err
	})
	r.run(t)
	r.work(t)
	crm := &crmFake{}
	reply := func(email, text string, headers map[string][]string) mailsync.Inbound {
		m := replyTo(email, r.sentID(t, id, email))
		m.Text, m.Headers = text, headers
		return m
	}
	r.classified(t, crm, reply("pos@example.net", "Sounds good, let's talk on Thursday.", nil))
	r.classified(t, crm, reply("neg@example.net", "Not interested, thanks.", nil))
	back := r.clock.AddDate(0, 0, 12)
	r.classified(t, crm, reply("away@example.net", "I am out of the office and back on "+back.Format("2006-01-02")+".",
		map[string][]string{"Auto-Submitted": {"auto-replied"}}))
	r.classified(t, crm, reply("auto@example.net", "We have received your request. Your ticket number is 1234.",
		map[string][]string{"Auto-Submitted": {"auto-generated"}}))
	r.classified(t, crm, reply("unsub@example.net", "Please remove me from your mailing list.", nil))
	bounce := reply("bounce@example.net", "Mail delivery failed", nil)
	bounce.Report = &dsn.Report{Kind: dsn.KindDelay, Shape: dsn.ShapePostfix}
	r.classified(t, crm, bounce)

	// A person's answers are replies (the campaign does not stop on reply: the positive lead keeps its flow);
	// the negative one pauses its lead with no end.
	require.Equal(t, 1, r.answers(t, id, "pos@example.net").Replied)
	require.Equal(t, engine.ReasonFollowUp, r.lead(t, id, "pos@example.net").WaitReason)
	neg := r.answers(t, id, "neg@example.net")
	require.Equal(t, 1, neg.Replied)
	require.Equal(t, campaign.HoldNegativeReply, *neg.HoldSource)
	require.Nil(t, neg.HoldUntil)
	require.Nil(t, r.lead(t, id, "neg@example.net").Due, "a paused lead is not due")

	// The out-of-office reply holds its lead until the start of the stated day in the campaign's timezone.
	away := r.answers(t, id, "away@example.net")
	require.Zero(t, away.Replied)
	require.Equal(t, campaign.HoldOutOfOffice, *away.HoldSource)
	var tz string
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT timezone FROM campaigns WHERE id = $1`, id).Scan(&tz)
	})
	loc, err := campaign.Location(tz)
	require.NoError(t, err)
	y, mo, d := back.Date()
	require.True(t, time.Date(y, mo, d, 0, 0, 0, 0, loc).Equal(*away.HoldUntil), "held until %v", away.HoldUntil)

	// Automated mail and reports are never replies.
	require.Zero(t, r.answers(t, id, "auto@example.net").Replied)
	require.Nil(t, r.answers(t, id, "auto@example.net").HoldSource)
	require.Zero(t, r.answers(t, id, "bounce@example.net").Replied)

	// The unsubscribe request unsubscribes by reply.
	require.Equal(t, []string{"reply"}, r.fields(t, events.CampaignUnsubscribed, "source"))
	require.Equal(t, "completed", r.lead(t, id, "unsub@example.net").State)

	require.Equal(t, []string{"positive", "negative", "negative"}, r.fields(t, events.CampaignReplyReceived, "intent"))
	require.Equal(t, []string{"positive", "negative", "out_of_office", "automated", "negative"},
		r.fields(t, events.InboxReplyReceived, "intent"), "every answer but the report is an inbox reply")
	require.Equal(t, 3, r.notified(t, string(notify.InboundReply)), "a person's answers are told to the campaign's owners")
	require.Equal(t, 1, r.notified(t, string(notify.InboundOutOfOffice)))
	require.Len(t, crm.tasks, 1)
	require.Equal(t, "positive", crm.tasks[0].Intent)
}

// TestWithReplyIntentDisabledOnlyTheReplyCounts: the verdict is still taken, but no hold, pause or
// unsubscribe follows; automated mail is still no reply.
func TestWithReplyIntentDisabledOnlyTheReplyCounts(t *testing.T) {
	r := newRig(t)
	id := r.campaign(t, twoSteps(), "neg@example.net", "away@example.net", "auto@example.net")
	r.exec(t, `UPDATE campaigns SET advanced = '{"reply_intent": {"enabled": false, "auto_pause_on_negative": true,
		"hold_on_out_of_office": true, "out_of_office_hold_days": 7}}' WHERE id = $1`, id)
	r.run(t)
	r.work(t)
	reply := func(email, text string, headers map[string][]string) mailsync.Inbound {
		m := replyTo(email, r.sentID(t, id, email))
		m.Text, m.Headers = text, headers
		return m
	}
	r.classified(t, nil, reply("neg@example.net", "Please unsubscribe me.", nil))
	r.classified(t, nil, reply("away@example.net", "I am out of the office until next month.", map[string][]string{"X-Autoreply": {"yes"}}))
	r.classified(t, nil, reply("auto@example.net", "This is an automated message, do not reply.", map[string][]string{"Precedence": {"bulk"}}))
	require.Equal(t, "completed", r.lead(t, id, "neg@example.net").State, "stop_on_reply still stops the lead")
	require.Nil(t, r.answers(t, id, "neg@example.net").HoldSource)
	require.Empty(t, r.fields(t, events.CampaignUnsubscribed, "source"))
	require.Nil(t, r.answers(t, id, "away@example.net").HoldSource)
	require.Zero(t, r.answers(t, id, "away@example.net").Replied)
	require.Zero(t, r.answers(t, id, "auto@example.net").Replied)
	require.Equal(t, []string{"negative"}, r.fields(t, events.CampaignReplyReceived, "intent"))
}
