package engine_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

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

// unmatchedState is what an unsubscribe request that answers no send left for one address (Subscribed is
// false for an address no contact has).
type unmatchedState struct {
	Subscribed                  bool
	Suppressions, Records       int
	RecordTask, RecordInbound   *uuid.UUID
	RecordSource, RecordSubject string
}

func (r *rig) unmatchedState(t testing.TB, address string) unmatchedState {
	t.Helper()
	var s unmatchedState
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT coalesce((SELECT subscribed FROM contacts WHERE email = $1), false)`, address).
			Scan(&s.Subscribed); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM suppressions WHERE kind = 'email' AND value = $1`, address).
			Scan(&s.Suppressions); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT count(*), (array_agg(d.task_id))[1], (array_agg(d.inbound_message_id))[1],
				coalesce(min(d.source), ''), coalesce(min(m.subject), '')
			FROM deliverability_events d LEFT JOIN inbox_messages m ON m.organization_id = d.organization_id AND m.id = d.inbound_message_id
			WHERE d.event_type = 'unsubscribe' AND d.recipient_email = $1 AND d.matched_by = 'address'`, address).
			Scan(&s.Records, &s.RecordTask, &s.RecordInbound, &s.RecordSource, &s.RecordSubject)
	})
	return s
}

// sentTask is the id of the newest send to email in the campaign.
func (r *rig) sentTask(t testing.TB, campaign uuid.UUID, email string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT id FROM send_tasks WHERE campaign_id = $1 AND to_email = $2 AND status = 'sent'
			ORDER BY created_at DESC, id DESC LIMIT 1`, campaign, email).Scan(&id)
	})
	return id
}

// TestAMailClientsUnsubscribeMessageThatAnswersNoSendUnsubscribesItsSender: the message a mail client sends to
// the mailto of our List-Unsubscribe header (to the sending mailbox, Subject: unsubscribe, no In-Reply-To,
// no text), synced from the mailbox, names no send; it is taken for the newest campaign send to its sender:
// the contact is unsubscribed, its lead stops, the address is suppressed, the deliverability record says
// matched_by address and names the stored message, and campaign.unsubscribed says source reply. The same
// message stored again from another folder changes nothing; the same request from an address the
// organization never mailed, and an ordinary message that answers no send, move no one.
func TestAMailClientsUnsubscribeMessageThatAnswersNoSendUnsubscribesItsSender(t *testing.T) {
	r := newRig(t)
	id := r.campaign(t, twoSteps(), "leaver@example.net", "stays@example.net")
	r.run(t)
	require.Equal(t, 2, r.work(t))
	message := func(from, subject, body string) []byte {
		return []byte("From: " + from + "\r\nTo: " + user + "\r\nSubject: " + subject + "\r\nMessage-ID: <" + uuid.NewString() +
			"@client.example>\r\nDate: " + time.Now().Format(time.RFC1123Z) + "\r\nContent-Type: text/plain\r\n\r\n" + body + "\r\n")
	}
	request := message("Leaver <Leaver@Example.net>", "unsubscribe", "")
	r.imap.Append(t, "INBOX", request)
	r.imap.Append(t, "Spam", request)
	r.imap.Append(t, "INBOX", message("stranger@example.net", "unsubscribe", ""))
	r.imap.Append(t, "INBOX", message("Stays <stays@example.net>", "Quick note", "Thanks, got it. I'll read it this week."))

	keyring, err := seal.NewKeyring(r.env.Config.SecretKey)
	require.NoError(t, err)
	s := mailsync.NewSyncer(r.env.DB.Pool, &mailbox.Credentials{Keyring: keyring, Pool: r.env.DB.Pool},
		mailbox.Dialer{TLS: mailtest.ClientTLS(), AllowInsecure: true, Timeout: 5 * time.Second}, slog.New(slog.DiscardHandler))
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
			return tx.QueryRow(ctx, `SELECT count(*) FROM inbox_messages WHERE folder IN ('INBOX', 'Spam')`).Scan(&stored)
		})
		return stored == 4
	}, 30*time.Second, 20*time.Millisecond)
	cancel()
	require.NoError(t, <-done)

	leaver := r.unmatchedState(t, "leaver@example.net")
	require.False(t, leaver.Subscribed)
	require.Equal(t, 1, leaver.Suppressions)
	require.Equal(t, 1, leaver.Records, "the copy in Spam is the same request: one record")
	require.Equal(t, r.sentTask(t, id, "leaver@example.net"), *leaver.RecordTask)
	require.NotNil(t, leaver.RecordInbound)
	require.Equal(t, "reply", leaver.RecordSource)
	require.Equal(t, "unsubscribe", leaver.RecordSubject, "the record names the stored request")
	require.Equal(t, "completed", r.lead(t, id, "leaver@example.net").State)
	require.Equal(t, engine.ReasonUnsubscribed, r.lead(t, id, "leaver@example.net").WaitReason)
	require.Equal(t, []string{"reply"}, r.fields(t, events.CampaignUnsubscribed, "source"))
	require.Equal(t, []string{"leaver@example.net"}, r.fields(t, events.CampaignUnsubscribed, "contact_email"))
	var flagged int
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM inbox_messages WHERE unsubscribe_request AND campaign_id IS NULL
			AND intent_evidence @> '[{"kind": "subject", "name": "unsubscribe"}]'`).Scan(&flagged)
	})
	require.Equal(t, 3, flagged, "each stored request keeps its verdict and evidence, matched to no send")

	stays := r.unmatchedState(t, "stays@example.net")
	require.True(t, stays.Subscribed)
	require.Zero(t, stays.Suppressions+stays.Records)
	require.Zero(t, r.unmatchedState(t, "stranger@example.net").Suppressions, "an address never mailed is no one's unsubscribe")
	require.Equal(t, engine.ReasonFollowUp, r.lead(t, id, "stays@example.net").WaitReason)
	r.advance(24*time.Hour + time.Minute)
	require.Equal(t, 1, r.run(t).Sends, "only the lead that did not unsubscribe gets its follow-up")
}

// TestAnUnsubscribeRequestThatAnswersNoSendFollowsItsCampaignsReplyIntentBlock: a request that answers no send
// acts only when the campaign of the newest send to its sender acts on unsubscribe requests by reply; a
// campaign that does not leaves the contact as it is, like a reply to one of its sends.
func TestAnUnsubscribeRequestThatAnswersNoSendFollowsItsCampaignsReplyIntentBlock(t *testing.T) {
	r := newRig(t)
	id := r.campaign(t, twoSteps(), "keeps@example.net")
	r.exec(t, `UPDATE campaigns SET advanced = '{"reply_intent": {"enabled": true, "auto_suppress_on_unsubscribe_keyword": false}}'
		WHERE id = $1`, id)
	r.run(t)
	r.work(t)
	r.classified(t, nil, mailsync.Inbound{FromEmail: "keeps@example.net", Subject: "unsubscribe"})
	s := r.unmatchedState(t, "keeps@example.net")
	require.True(t, s.Subscribed)
	require.Zero(t, s.Suppressions+s.Records)
	require.Empty(t, r.fields(t, events.CampaignUnsubscribed, "source"))

	r.exec(t, `UPDATE campaigns SET advanced = '{}' WHERE id = $1`, id)
	r.classified(t, nil, mailsync.Inbound{FromEmail: "keeps@example.net", Subject: "Re: Hello Lead",
		Text: "Please take me off your list."})
	s = r.unmatchedState(t, "keeps@example.net")
	require.False(t, s.Subscribed, "with the defaults, a new email asking to be removed is honoured")
	require.Equal(t, 1, s.Records)
}
