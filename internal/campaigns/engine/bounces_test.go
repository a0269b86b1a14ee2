package engine_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/dsn"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/mail/mailsync"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/internal/testkit/mailtest"
)

// corpus is a message of the mail/dsn corpus returning (or answering) the newest send to email in the campaign:
// the corpus's own Message-ID of the returned message (or the one it answers) is replaced by the send's, then
// the pairs of replace are applied.
func (r *rig) corpus(t testing.TB, file string, campaign uuid.UUID, email string, replace ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "mail", "dsn", "testdata", file))
	require.NoError(t, err)
	raw := string(b)
	old := corpusID.FindString(raw) // the first the message names: the one it answers, or the one it returns
	if rep, ok := dsn.Parse(b); ok {
		old = rep.Original.MessageID
	}
	require.NotEmpty(t, old, "%s names no message to replace", file)
	raw = strings.ReplaceAll(raw, old, strings.Trim(r.sentID(t, campaign, email), "<>"))
	return []byte(strings.NewReplacer(replace...).Replace(raw))
}

// corpusID is a Message-ID of the corpus's own sends.
var corpusID = regexp.MustCompile(`0193185e-[0-9a-f-]+@example\.com`)

// report tells the engine a report as the mail sync would (without a mailbox round trip).
func (r *rig) report(t testing.TB, raw []byte) {
	t.Helper()
	rep, ok := dsn.Parse(raw)
	require.True(t, ok, "the message is a report")
	r.inbound(t, mailsync.Inbound{FromEmail: rep.From, Subject: rep.Subject, Report: &rep})
}

// syncFolder runs the mailbox's sync with the engine's inbound hook until the folder holds want messages.
func (r *rig) syncFolder(t testing.TB, folder string, want int) {
	t.Helper()
	keyring, err := seal.NewKeyring(r.env.Config.SecretKey)
	require.NoError(t, err)
	s := mailsync.NewSyncer(r.env.DB.Pool, &mailbox.Credentials{Keyring: keyring, Pool: r.env.DB.Pool},
		mailbox.Dialer{TLS: mailtest.ClientTLS(), AllowInsecure: true, Timeout: 5 * time.Second}, slog.New(slog.DiscardHandler))
	s.OnInbound(r.eng.Replied)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, events.NewOutbox(r.jobs), r.org, r.box.ID) }()
	require.Eventually(t, func() bool {
		var stored int
		r.query(t, func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT count(*) FROM inbox_messages WHERE folder = $1`, folder).Scan(&stored)
		})
		return stored == want
	}, 30*time.Second, 20*time.Millisecond)
	cancel()
	require.NoError(t, <-done)
}

// recorded is a deliverability event as stored.
type recorded struct {
	Kind, Source, Bounce, Status, Reason, Provider, MatchedBy, Feedback string
	SMTP                                                                int
	Task                                                                *uuid.UUID
	Inbound                                                             bool
}

// recorded lists the deliverability events about an address, oldest first.
func (r *rig) recorded(t testing.TB, email string) []recorded {
	t.Helper()
	var out []recorded
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT event_type, source, coalesce(bounce_type, ''), status_code, reason, provider,
				matched_by, feedback_type, coalesce(smtp_code, 0), task_id, inbound_message_id IS NOT NULL
			FROM deliverability_events WHERE recipient_email = $1 ORDER BY created_at, id`, email)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e recorded
			if err := rows.Scan(&e.Kind, &e.Source, &e.Bounce, &e.Status, &e.Reason, &e.Provider, &e.MatchedBy, &e.Feedback,
				&e.SMTP, &e.Task, &e.Inbound); err != nil {
				return err
			}
			out = append(out, e)
		}
		return rows.Err()
	})
	return out
}

// suppressed is the source of the address's suppression ("" when it is not suppressed).
func (r *rig) suppressed(t testing.TB, email string) string {
	t.Helper()
	var source string
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT source FROM suppressions WHERE kind = 'email' AND value = $1`, email).Scan(&source)
		if err == pgx.ErrNoRows {
			return nil
		}
		return err
	})
	return source
}

// count answers a count query of the rig's organization.
func (r *rig) count(t testing.TB, sql string, args ...any) int {
	t.Helper()
	var n int
	r.query(t, func(ctx context.Context, tx pgx.Tx) error { return tx.QueryRow(ctx, sql, args...).Scan(&n) })
	return n
}

// notified counts the organization's notifications of a category.
func (r *rig) notified(t testing.TB, category string) int {
	return r.count(t, `SELECT count(*) FROM notifications WHERE organization_id = $1 AND category = $2`, r.org, category)
}

// eventData is the data of the organization's outbox events of a type, oldest first.
func (r *rig) eventData(t testing.TB, typ events.Type) []map[string]any {
	t.Helper()
	var out []map[string]any
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT data FROM event_outbox WHERE event_type = $1 ORDER BY created_at, id`, string(typ))
		if err != nil {
			return err
		}
		raws, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
		for _, raw := range raws {
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				return err
			}
			out = append(out, m)
		}
		return err
	})
	return out
}

func TestReportsSyncedFromTheMailboxAreMatchedToTheirSendsAndRecordedWithTheirEvidence(t *testing.T) {
	r := newRig(t)
	leads := []string{"bob@example.net", "dave@example.net", "erin@example.net", "frank@example.net", "grace@example.net",
		"henry@example.net", "carol@example.net", "ivy@example.net", "kim@example.net", "lee@example.net"}
	id := r.campaign(t, twoSteps(), leads...)
	require.Equal(t, 10, r.run(t).Sends)
	require.Equal(t, 10, r.work(t))
	r.advance(time.Minute)
	for _, m := range [][]byte{
		r.corpus(t, "postfix_hard.eml", id, "bob@example.net"),
		r.corpus(t, "exim_hard.eml", id, "dave@example.net"),
		r.corpus(t, "exchange_hard.eml", id, "erin@example.net"),
		r.corpus(t, "gmail_mailbox_full.eml", id, "frank@example.net"),
		r.corpus(t, "qmail_nonstandard.eml", id, "grace@example.net"),
		r.corpus(t, "arf_abuse.eml", id, "henry@example.net"),
		r.corpus(t, "postfix_delayed.eml", id, "carol@example.net"),
		r.corpus(t, "not_out_of_office.eml", id, "ivy@example.net"),
		// A person's reply that mentions an SMTP code and an address is a reply.
		r.corpus(t, "not_reply.eml", id, "kim@example.net", "bob@example.net", "kim@example.net"),
		// A report of delivered recipients is no bounce, whatever send it names.
		r.corpus(t, "not_delivered_dsn.eml", id, "lee@example.net", "kim@example.net", "lee@example.net"),
	} {
		r.imap.Append(t, "INBOX", m)
	}
	r.syncFolder(t, "INBOX", 10)

	task := func(email string) *uuid.UUID {
		var tid uuid.UUID
		r.query(t, func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT id FROM send_tasks WHERE campaign_id = $1 AND to_email = $2`, id, email).Scan(&tid)
		})
		return &tid
	}
	hard := func(email, status string, smtp int, reason, shape string) recorded {
		return recorded{Kind: "bounce", Source: "dsn", Bounce: "hard", Status: status, Reason: reason, Provider: shape,
			MatchedBy: "message_id", SMTP: smtp, Task: task(email), Inbound: true}
	}
	require.Equal(t, []recorded{hard("bob@example.net", "5.1.1", 550, "unknown_user", "postfix")}, r.recorded(t, "bob@example.net"))
	require.Equal(t, []recorded{hard("dave@example.net", "", 550, "other", "exim")}, r.recorded(t, "dave@example.net"))
	require.Equal(t, []recorded{hard("erin@example.net", "5.1.10", 550, "unknown_user", "exchange")}, r.recorded(t, "erin@example.net"))
	require.Equal(t, []recorded{hard("grace@example.net", "5.7.1", 550, "policy", "nonstandard")}, r.recorded(t, "grace@example.net"))
	soft := hard("frank@example.net", "5.2.2", 552, "mailbox_full", "gmail")
	soft.Bounce = "soft"
	require.Equal(t, []recorded{soft}, r.recorded(t, "frank@example.net"))
	require.Equal(t, []recorded{{Kind: "complaint", Source: "arf", Provider: "arf", MatchedBy: "message_id", Feedback: "abuse",
		Task: task("henry@example.net"), Inbound: true}}, r.recorded(t, "henry@example.net"))
	for _, e := range []string{"carol@example.net", "ivy@example.net", "kim@example.net", "lee@example.net"} {
		require.Empty(t, r.recorded(t, e), "%s: a delay, an out-of-office reply, a reply or a delivery report records nothing", e)
	}

	got := r.leadsOf(t, id)
	for _, e := range []string{"bob@example.net", "dave@example.net", "erin@example.net", "grace@example.net"} {
		require.Equal(t, "failed", got[e].State, e)
		require.Equal(t, 1, got[e].Bounced, e)
		require.Nil(t, got[e].Due, e)
		require.Contains(t, got[e].Failure, "The recipient's address bounced: ", e)
		require.Equal(t, "bounce", r.suppressed(t, e), e)
	}
	require.Equal(t, engine.ReasonRetry, got["frank@example.net"].WaitReason, "a soft bounce sends the step again")
	require.Zero(t, got["frank@example.net"].Position)
	require.Zero(t, got["frank@example.net"].Sent, "the step that bounced is no longer counted as sent")
	require.Empty(t, r.suppressed(t, "frank@example.net"))
	require.Equal(t, "completed", got["henry@example.net"].State)
	require.Equal(t, engine.ReasonComplained, got["henry@example.net"].WaitReason)
	require.Equal(t, "complaint", r.suppressed(t, "henry@example.net"))
	require.Equal(t, engine.ReasonFollowUp, got["carol@example.net"].WaitReason)
	require.Equal(t, engine.ReasonOutOfOffice, got["ivy@example.net"].WaitReason)
	require.Equal(t, engine.ReasonReplied, got["kim@example.net"].WaitReason)
	require.Equal(t, engine.ReasonFollowUp, got["lee@example.net"].WaitReason)

	require.Equal(t, 1, r.count(t, `SELECT count(*) FROM send_tasks WHERE replied_at IS NOT NULL`), "only kim replied")
	require.Equal(t, 4, r.count(t, `SELECT count(*) FROM send_tasks WHERE bounced_at IS NOT NULL`))
	require.Equal(t, 5, r.eventCount(t, events.DeliverabilityBounce))
	require.Equal(t, 5, r.eventCount(t, events.CampaignEmailBounced))
	require.Equal(t, 1, r.eventCount(t, events.DeliverabilityComplaint))
	require.Equal(t, 1, r.eventCount(t, events.CampaignReplyReceived))
	require.Equal(t, 4, r.notified(t, "health_bounce"), "hard bounces only")
	require.Equal(t, 1, r.notified(t, "health_complaint"))
	require.Zero(t, r.eventCount(t, events.CampaignDeliverabilityWarning), "ten sends are too few to judge a rate")
	require.Equal(t, "active", r.status(t, id))
	for _, d := range r.eventData(t, events.CampaignEmailBounced) {
		if d["email"] == "bob@example.net" {
			require.Equal(t, "hard", d["bounce_type"])
			require.Equal(t, "5.1.1", d["status_code"])
			require.Equal(t, "unknown_user", d["reason"])
			require.Contains(t, d["diagnostic"], "User unknown in virtual mailbox table")
			require.Equal(t, id.String(), d["campaign_id"])
		}
	}
	require.Contains(t, r.logLines(t, id, "lead_bounced"), `"Hello Lead" to bob@example.net bounced (550 5.1.1 <bob@example.net>: `+
		`Recipient address rejected: User unknown in virtual mailbox table). The lead stopped.`)

	// Stored again from another folder, the reports count once.
	r.imap.Append(t, "Spam", r.corpus(t, "postfix_hard.eml", id, "bob@example.net"))
	r.imap.Append(t, "Spam", r.corpus(t, "arf_abuse.eml", id, "henry@example.net"))
	r.syncFolder(t, "Spam", 2)
	require.Len(t, r.recorded(t, "bob@example.net"), 1)
	require.Len(t, r.recorded(t, "henry@example.net"), 1)
	require.Equal(t, 4, r.notified(t, "health_bounce"))

	r.advance(24 * time.Hour)
	require.Equal(t, 3, r.run(t).Sends, "frank's step again, carol's and lee's follow-ups")
	require.Equal(t, 3, r.work(t))
	sent := r.received()
	require.Equal(t, 2, sent["frank@example.net"])
	require.Equal(t, 1, sent["bob@example.net"], "a bounced lead gets nothing more")
	require.Equal(t, 1, sent["henry@example.net"], "nor does a lead that complained")
}

func TestAReportNamingNoSendOfTheOrganizationOrAnotherRecipientRecordsNothing(t *testing.T) {
	r := newRig(t)
	id := r.campaign(t, twoSteps(), "bob@example.net")
	r.run(t)
	r.work(t)
	own := r.corpus(t, "postfix_hard.eml", id, "bob@example.net")
	sent := strings.Trim(r.sentID(t, id, "bob@example.net"), "<>")
	r.report(t, []byte(strings.ReplaceAll(string(own), sent, uuid.NewString()+"@example.com")))  // not a send of ours
	r.report(t, []byte(strings.ReplaceAll(string(own), "bob@example.net", "other@example.net"))) // another recipient
	r.report(t, []byte(strings.ReplaceAll(string(own), sent, "not-a-uuid@example.com")))
	require.Empty(t, r.recorded(t, "bob@example.net"))
	require.Empty(t, r.recorded(t, "other@example.net"))
	l := r.lead(t, id, "bob@example.net")
	require.Equal(t, "active", l.State)
	require.Zero(t, l.Bounced)
	require.Zero(t, r.answers(t, id, "bob@example.net").Replied, "a report is never a reply")
	require.Zero(t, r.eventCount(t, events.DeliverabilityBounce))
}

func TestARejectedRecipientIsRecordedWithItsCodesSuppressedAndCountedOnce(t *testing.T) {
	r := newRig(t)
	r.smtp.OnRcpt(func(to string) error {
		if strings.HasPrefix(to, "gone@") {
			return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "No such user"}
		}
		return nil
	})
	id := r.campaign(t, twoSteps(), "gone@example.net", "here@example.net")
	r.run(t)
	r.work(t)
	tasks := r.taskIDs(t, id, "failed")
	require.Len(t, tasks, 1)
	require.Equal(t, []recorded{{Kind: "bounce", Source: "pipeline", Bounce: "hard", Status: "5.1.1", Reason: "unknown_user",
		MatchedBy: "pipeline", SMTP: 550, Task: &tasks[0]}}, r.recorded(t, "gone@example.net"))
	require.Equal(t, "bounce", r.suppressed(t, "gone@example.net"))
	require.Equal(t, 1, r.lead(t, id, "gone@example.net").Bounced)
	require.Equal(t, 1, r.count(t, `SELECT count(*) FROM send_tasks WHERE id = $1 AND bounced_at IS NOT NULL`, tasks[0]))
	bounced := r.eventData(t, events.CampaignEmailBounced)
	require.Len(t, bounced, 1)
	require.Equal(t, "recipient_rejected", bounced[0]["error_code"])
	require.Equal(t, "5.1.1", bounced[0]["status_code"])
	require.Equal(t, "RCPT: 550 5.1.1 No such user", bounced[0]["diagnostic"])
	require.Equal(t, 1, r.eventCount(t, events.DeliverabilityBounce))
	require.Equal(t, 1, r.notified(t, "health_bounce"))
	require.Equal(t, "here@example.net", r.smtp.Messages()[0].To[0])
}

func TestASoftBounceSendsTheStepAgainUntilTheAttemptLimitFailsTheLead(t *testing.T) {
	r := newRig(t)
	id := r.campaign(t, oneStep(), "frank@example.net")
	for attempt := 1; attempt <= 5; attempt++ {
		require.Equal(t, 1, r.run(t).Sends, "attempt %d", attempt)
		require.Equal(t, 1, r.work(t))
		require.Equal(t, "completed", r.status(t, id), "its only lead took its only step")
		r.report(t, r.corpus(t, "gmail_mailbox_full.eml", id, "frank@example.net"))
		l := r.lead(t, id, "frank@example.net")
		require.Zero(t, l.Sent, "attempt %d: the step that bounced is not counted as sent", attempt)
		if attempt < 5 {
			require.Equal(t, "pending", l.State, "nothing reached the contact yet")
			require.Equal(t, engine.ReasonRetry, l.WaitReason)
			require.Zero(t, l.Position)
			require.Equal(t, r.clock.Add(10*time.Minute), *l.Due)
			require.Equal(t, "active", r.status(t, id), "the campaign reopens for the retry")
		}
		r.advance(11 * time.Minute)
	}
	l := r.lead(t, id, "frank@example.net")
	require.Equal(t, "failed", l.State)
	require.Contains(t, l.Failure, "Step 1 bounced softly 5 times: ")
	require.Zero(t, l.Bounced, "soft bounces do not make the lead bounced")
	require.Equal(t, "completed", r.status(t, id))
	require.Zero(t, r.run(t).Sends)
	require.Len(t, r.recorded(t, "frank@example.net"), 5)
	require.Empty(t, r.suppressed(t, "frank@example.net"))
	require.Zero(t, r.notified(t, "health_bounce"))
	require.Zero(t, r.count(t, `SELECT count(*) FROM send_tasks WHERE bounced_at IS NOT NULL`))
	for _, d := range r.eventData(t, events.CampaignEmailBounced) {
		require.Equal(t, "soft", d["bounce_type"])
	}
	require.Len(t, r.eventData(t, events.CampaignEmailBounced), 5)
	require.Equal(t, []string{
		`"Hello Lead" to frank@example.net bounced softly (552-5.2.2 The email account that you tried to reach is over ` +
			`quota. Please direct). The step is sent again (soft bounce 1 of 5).`,
	}, r.logLines(t, id, "lead_soft_bounced")[:1])
}
