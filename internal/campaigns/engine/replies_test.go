package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/campaigns/unsubscribe"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/inbox/classify"
	"github.com/outflowhq/outflow/internal/inbox/replies"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/mail/mailsync"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/internal/testkit/mailtest"
)

// sentID is the Message-ID of the newest send to email in the campaign.
func (r *rig) sentID(t testing.TB, campaign uuid.UUID, email string) string {
	t.Helper()
	var id string
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT message_id FROM send_tasks WHERE campaign_id = $1 AND to_email = $2 AND status = 'sent'
			ORDER BY created_at DESC, id DESC LIMIT 1`, campaign, email).Scan(&id)
	})
	return id
}

// inbound tells the engine a synced message, as the mail sync's hook does.
func (r *rig) inbound(t testing.TB, m mailsync.Inbound) {
	t.Helper()
	m.OrganizationID, m.MailboxID = r.org, r.box.ID
	if m.MessageID == "" {
		m.MessageID = "<" + uuid.NewString() + "@client.example>"
	}
	if m.ReceivedAt.IsZero() {
		m.ReceivedAt = r.clock
	}
	outbox := events.NewOutbox(r.jobs)
	r.query(t, func(ctx context.Context, tx pgx.Tx) error { return r.eng.Replied(ctx, tx, outbox, m) })
}

// replyTo is a reply from email to the message with Message-ID id.
func replyTo(email, id string) mailsync.Inbound {
	return mailsync.Inbound{FromEmail: email, InReplyTo: id, References: []string{id}, Subject: "Re: Hello Lead"}
}

// answers is what a reply left on a lead and its sends.
type answers struct {
	Replied, RepliedSends int
	HoldSource            *string
	HoldUntil             *time.Time
	Logs                  []string
}

func (r *rig) answers(t testing.TB, campaign uuid.UUID, email string) answers {
	t.Helper()
	var a answers
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT l.replied, l.hold_source, l.hold_until,
				(SELECT count(*) FROM send_tasks t WHERE t.campaign_id = l.campaign_id AND t.contact_id = l.contact_id AND t.replied_at IS NOT NULL)
			FROM campaign_leads l JOIN contacts c ON c.organization_id = l.organization_id AND c.id = l.contact_id
			WHERE l.campaign_id = $1 AND c.email = $2`, campaign, email).Scan(&a.Replied, &a.HoldSource, &a.HoldUntil, &a.RepliedSends); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT event_type || ': ' || message FROM campaign_logs
			WHERE campaign_id = $1 AND event_type IN ('lead_replied', 'lead_out_of_office') ORDER BY id`, campaign)
		if err != nil {
			return err
		}
		a.Logs, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	return a
}

func TestAReplyStopsTheLeadAndCancelsItsQueuedFollowUp(t *testing.T) {
	r := newRig(t)
	id := r.campaign(t, twoSteps(), "a@example.net", "b@example.net")
	require.Equal(t, 2, r.run(t).Sends)
	require.Equal(t, 2, r.work(t))
	first := r.sentID(t, id, "a@example.net")
	r.advance(24*time.Hour + time.Minute)
	require.Equal(t, 2, r.run(t).Sends, "both follow-ups are queued")

	r.advance(time.Minute)
	r.inbound(t, replyTo("a@example.net", first))
	l := r.lead(t, id, "a@example.net")
	require.Equal(t, "completed", l.State)
	require.Equal(t, engine.ReasonReplied, l.WaitReason)
	require.Nil(t, l.Due)
	require.Nil(t, l.Task, "the queued follow-up is cancelled")
	require.Equal(t, 1, l.Position, "the cancelled step is not counted as taken")
	a := r.answers(t, id, "a@example.net")
	require.Equal(t, 1, a.Replied)
	require.Equal(t, 1, a.RepliedSends)
	require.Equal(t, []string{`lead_replied: a@example.net replied to "Hello Lead". The lead stopped: the campaign stops on reply.`}, a.Logs)
	require.Equal(t, 1, r.eventCount(t, events.CampaignReplyReceived))

	require.Equal(t, 1, r.work(t), "only the other lead's follow-up is attempted")
	msgs := r.smtp.Messages()
	require.Len(t, msgs, 3)
	require.Equal(t, []string{"b@example.net"}, msgs[2].To)
	var canceled int
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM send_tasks WHERE campaign_id = $1 AND status = 'canceled'
			AND error_code = 'contact_replied'`, id).Scan(&canceled)
	})
	require.Equal(t, 1, canceled)
	var daySends int
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT sum(sent) FROM campaign_send_days WHERE campaign_id = $1`, id).Scan(&daySends)
	})
	require.Equal(t, 3, daySends, "the cancelled follow-up gave its place in the campaign's day back")

	// The same reply stored again (another folder) counts once; the campaign completed with its last lead.
	r.inbound(t, replyTo("a@example.net", first))
	require.Equal(t, 1, r.answers(t, id, "a@example.net").Replied)
	require.Equal(t, 1, r.eventCount(t, events.CampaignReplyReceived))
	got, err := r.c.CampaignsGet(t.Context(), api.CampaignsGetParams{ID: id})
	require.NoError(t, err)
	require.Equal(t, "completed", string(got.Status))
	r.advance(7 * 24 * time.Hour)
	require.Zero(t, r.run(t).Sends)
}

func TestWithStopOnReplyOffARepliedLeadGetsItsNextStep(t *testing.T) {
	r := newRig(t)
	id := r.campaign(t, twoSteps(), "a@example.net")
	r.exec(t, `UPDATE campaigns SET stop_on_reply = false WHERE id = $1`, id)
	r.run(t)
	r.work(t)
	r.inbound(t, replyTo("a@example.net", r.sentID(t, id, "a@example.net")))
	l := r.lead(t, id, "a@example.net")
	require.Equal(t, "active", l.State)
	require.Equal(t, engine.ReasonFollowUp, l.WaitReason)
	a := r.answers(t, id, "a@example.net")
	require.Equal(t, 1, a.Replied)
	require.Equal(t, []string{`lead_replied: a@example.net replied to "Hello Lead".`}, a.Logs)
	require.Equal(t, 1, r.eventCount(t, events.CampaignReplyReceived))

	r.advance(24*time.Hour + time.Minute)
	require.Equal(t, 1, r.run(t).Sends)
	require.Equal(t, 1, r.work(t))
	require.Equal(t, "completed", r.lead(t, id, "a@example.net").State)
}

func TestAMessageFromAnotherAddressOrAnsweringNoCampaignSendChangesNothing(t *testing.T) {
	r := newRig(t)
	id := r.campaign(t, twoSteps(), "a@example.net", "b@example.net")
	r.run(t)
	r.work(t)
	first := r.sentID(t, id, "a@example.net")
	r.inbound(t, replyTo("b@example.net", first))           // someone else answering a's message
	r.inbound(t, replyTo("a@example.net", "<x@elsewhere>")) // a answering mail that is not a campaign send
	r.inbound(t, mailsync.Inbound{FromEmail: "a@example.net", Subject: "A new conversation"})
	for _, e := range []string{"a@example.net", "b@example.net"} {
		l := r.lead(t, id, e)
		require.Equal(t, "active", l.State, e)
		require.Equal(t, engine.ReasonFollowUp, l.WaitReason, e)
		a := r.answers(t, id, e)
		require.Zero(t, a.Replied, e)
		require.Zero(t, a.RepliedSends, e)
		require.Empty(t, a.Logs, e)
	}
	require.Zero(t, r.eventCount(t, events.CampaignReplyReceived))
	r.advance(24*time.Hour + time.Minute)
	require.Equal(t, 2, r.run(t).Sends)
}

func TestAnOutOfOfficeReplyHoldsTheLeadUntilTheHoldEndsAndThenItContinues(t *testing.T) {
	r := newRig(t)
	id := r.campaign(t, twoSteps(), "a@example.net", "b@example.net")
	r.run(t)
	r.work(t)
	away := replyTo("a@example.net", r.sentID(t, id, "a@example.net"))
	away.OutOfOffice, away.Subject = true, "Automatic reply: Hello Lead"
	r.inbound(t, away)

	l := r.lead(t, id, "a@example.net")
	require.Equal(t, "active", l.State)
	require.Equal(t, engine.ReasonOutOfOffice, l.WaitReason)
	until := r.clock.AddDate(0, 0, 7) // reply_intent's default out_of_office_hold_days
	require.WithinDuration(t, until, *l.Due, time.Second)
	a := r.answers(t, id, "a@example.net")
	require.Equal(t, "out_of_office", *a.HoldSource)
	require.WithinDuration(t, until, *a.HoldUntil, time.Second)
	require.Zero(t, a.Replied, "an out-of-office reply is not a reply")
	require.Zero(t, r.eventCount(t, events.CampaignReplyReceived))
	require.Equal(t, []string{fmt.Sprintf(`lead_out_of_office: a@example.net answered "Hello Lead" with an out-of-office reply; the lead is held until %s.`,
		until.UTC().Format(time.RFC3339))}, a.Logs)

	r.advance(24*time.Hour + time.Minute)
	require.Equal(t, 1, r.run(t).Sends, "only the lead that is not held gets its follow-up")
	require.Equal(t, 1, r.work(t))
	require.Equal(t, []string{"b@example.net"}, r.smtp.Messages()[2].To)

	r.advance(6 * 24 * time.Hour)
	require.Equal(t, 1, r.run(t).Sends, "the hold is over")
	require.Equal(t, 1, r.work(t))
	require.Equal(t, []string{"a@example.net"}, r.smtp.Messages()[3].To)
	l = r.lead(t, id, "a@example.net")
	require.Equal(t, "completed", l.State)
	require.Nil(t, r.answers(t, id, "a@example.net").HoldSource, "the hold was lifted")
}

func TestAnOutOfOfficeReplyWithHoldingOffLeavesTheLeadAsItWas(t *testing.T) {
	r := newRig(t)
	id := r.campaign(t, twoSteps(), "a@example.net")
	r.exec(t, `UPDATE campaigns SET advanced = '{"reply_intent": {"enabled": true, "hold_on_out_of_office": false,
		"out_of_office_hold_days": 7}}' WHERE id = $1`, id)
	r.run(t)
	r.work(t)
	away := replyTo("a@example.net", r.sentID(t, id, "a@example.net"))
	away.OutOfOffice = true
	r.inbound(t, away)
	l := r.lead(t, id, "a@example.net")
	require.Equal(t, engine.ReasonFollowUp, l.WaitReason)
	a := r.answers(t, id, "a@example.net")
	require.Nil(t, a.HoldSource)
	require.Equal(t, []string{`lead_out_of_office: a@example.net answered "Hello Lead" with an out-of-office reply; the lead is not held: ` +
		`the campaign's reply_intent block does not hold leads on out-of-office replies.`}, a.Logs)
	r.advance(24*time.Hour + time.Minute)
	require.Equal(t, 1, r.run(t).Sends)
}

func TestRepliesSyncedFromTheMailboxStopOrHoldTheirLeads(t *testing.T) {
	r := newRig(t)
	id := r.campaign(t, twoSteps(), "a@example.net", "b@example.net", "c@example.net")
	r.run(t)
	r.work(t)
	answer := func(from, id, extra, body string) []byte {
		return []byte("From: Lead <" + from + ">\r\nTo: " + user + "\r\nSubject: Re: Hello Lead\r\n" + extra +
			"Message-ID: <" + from + ">\r\nIn-Reply-To: " + id + "\r\nReferences: " + id +
			"\r\nDate: " + time.Now().Format(time.RFC1123Z) + "\r\nContent-Type: text/plain\r\n\r\n" + body + "\r\n")
	}
	r.imap.Append(t, "INBOX", answer("a@example.net", r.sentID(t, id, "a@example.net"), "", "Sounds good, let's talk next week."))
	r.imap.Append(t, "INBOX", answer("b@example.net", r.sentID(t, id, "b@example.net"), "Auto-Submitted: auto-replied\r\n",
		"I am out of the office with limited access to email."))
	r.imap.Append(t, "INBOX", answer("c@example.net", "<not-ours@example.net>", "", "Sounds good."))

	keyring, err := seal.NewKeyring(r.env.Config.SecretKey)
	require.NoError(t, err)
	s := mailsync.NewSyncer(r.env.DB.Pool, &mailbox.Credentials{Keyring: keyring, Pool: r.env.DB.Pool},
		mailbox.Dialer{TLS: mailtest.ClientTLS(), AllowInsecure: true, Timeout: 5 * time.Second}, slog.New(slog.DiscardHandler))
	// The hook the composition root installs: the inbox's reply understanding in front of the engine.
	rules, err := classify.NewRules()
	require.NoError(t, err)
	outbox := events.NewOutbox(r.jobs)
	s.OnInbound(replies.New(r.eng, unsubscribe.New(r.env.DB.Pool, nil, outbox), rules, nil).Inbound)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, outbox, r.org, r.box.ID) }()
	require.Eventually(t, func() bool {
		var stored int
		r.query(t, func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT count(*) FROM inbox_messages WHERE folder = 'INBOX'`).Scan(&stored)
		})
		return stored == 3
	}, 30*time.Second, 20*time.Millisecond)
	cancel()
	require.NoError(t, <-done)

	require.Equal(t, "completed", r.lead(t, id, "a@example.net").State)
	require.Equal(t, engine.ReasonReplied, r.lead(t, id, "a@example.net").WaitReason)
	require.Equal(t, engine.ReasonOutOfOffice, r.lead(t, id, "b@example.net").WaitReason)
	require.Equal(t, engine.ReasonFollowUp, r.lead(t, id, "c@example.net").WaitReason)
	require.Equal(t, 1, r.eventCount(t, events.CampaignReplyReceived))
	// Each stored message carries its verdict, and the match to the campaign send it answers.
	type verdict struct {
		Intent, Classifier string
		Evidence           bool
		Campaign           *uuid.UUID
	}
	stored := map[string]verdict{}
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT message_id, intent, classifier, jsonb_array_length(intent_evidence) > 0, campaign_id
			FROM inbox_messages WHERE folder = 'INBOX'`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var key string
			var v verdict
			if err := rows.Scan(&key, &v.Intent, &v.Classifier, &v.Evidence, &v.Campaign); err != nil {
				return err
			}
			stored[key] = v
		}
		return rows.Err()
	})
	require.Equal(t, map[string]verdict{
		"<a@example.net>": {Intent: "positive", Classifier: "rules/v1", Evidence: true, Campaign: &id},
		"<b@example.net>": {Intent: "out_of_office", Classifier: "rules/v1", Evidence: true, Campaign: &id},
		"<c@example.net>": {Intent: "positive", Classifier: "rules/v1", Evidence: true},
	}, stored)
	r.advance(24*time.Hour + time.Minute)
	require.Equal(t, 1, r.run(t).Sends, "only the lead that neither replied nor is away gets its follow-up")
	require.Equal(t, 1, r.work(t))
	require.Equal(t, []string{"c@example.net"}, r.smtp.Messages()[3].To)
}
