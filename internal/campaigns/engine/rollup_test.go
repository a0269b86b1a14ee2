package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/analytics/metrics"
	"github.com/outflowhq/outflow/internal/analytics/rollup"
	"github.com/outflowhq/outflow/internal/campaigns/tracking"
	"github.com/outflowhq/outflow/internal/campaigns/unsubscribe"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/inbox/classify"
	"github.com/outflowhq/outflow/internal/inbox/replies"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/mail/mailsync"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/internal/testkit/mailtest"
	"github.com/outflowhq/outflow/internal/testkit/rolluptest"
)

// rollups is every counter row of the organization whose counters are not all zero, keyed by table and key.
func (r *rig) rollups(t testing.TB) map[string]metrics.Counters {
	t.Helper()
	var out map[string]metrics.Counters
	r.query(t, func(ctx context.Context, tx pgx.Tx) (err error) {
		out, err = rolluptest.Rows(ctx, tx, r.org)
		return err
	})
	return out
}

// total sums the rows of one table (its name and a space prefix the keys).
func total(rows map[string]metrics.Counters, prefix string) metrics.Counters {
	var sum metrics.Counters
	for k, c := range rows {
		if len(k) >= len(prefix) && k[:len(prefix)] == prefix {
			sum.Add(c)
		}
	}
	return sum
}

func TestRollupsFedByTheRealPathsEqualARebuildFromTheSourceRows(t *testing.T) {
	r := newUnsubRig(t)
	leads := []string{"ann@example.net", "bob@example.net", "cat@example.net", "henry@example.net", "eve@example.net"}
	id := r.campaign(t, twoSteps(), leads...)
	require.Equal(t, 5, r.run(t).Sends)
	require.Equal(t, 5, r.work(t), "five sends through the pipeline and the in-process SMTP server")

	// Opens and clicks through the tracking endpoints, an hour after dispatch (outside the machine windows).
	token := func(email string, kind tracking.Kind, link int) string {
		tok := tracking.Token{Kind: kind, OrganizationID: r.org, TaskID: r.taskOf(t, email)}
		if kind == tracking.KindClick {
			tok.LinkIndex, tok.URL = link, fmt.Sprintf("https://example.com/%d", link)
		}
		s, err := r.signer.Sign(tok)
		require.NoError(t, err)
		return s
	}
	const browser = "Mozilla/5.0 (Windows NT 10.0; Win64; x64)"
	proxy := browser + " GoogleImageProxy"
	late := time.Now().Add(time.Hour)
	flush := func() { require.NoError(t, r.env.Tracking.Flush(context.Background())) }
	require.Equal(t, http.StatusOK, r.fetch(t, late, "/t/o/"+token("ann@example.net", tracking.KindOpen, 0), proxy))
	require.Equal(t, http.StatusOK, r.fetch(t, late, "/t/o/"+token("bob@example.net", tracking.KindOpen, 0), proxy))
	require.Equal(t, http.StatusFound, r.fetch(t, late, "/t/c/"+token("cat@example.net", tracking.KindClick, 0), browser))
	require.Equal(t, http.StatusFound, r.fetch(t, late, "/t/c/"+token("henry@example.net", tracking.KindClick, 0), browser))
	flush()
	before := r.rollups(t)
	campaignDays := total(before, "analytics_org_days")
	require.EqualValues(t, 2, campaignDays.MachineOpens, "ann's and bob's sends were opened by machines only so far")
	require.EqualValues(t, 0, campaignDays.MachineClicks, "cat's and henry's clicks are a person's")

	// A person opens ann's message; cat's second link, clicked from the same source two seconds later, makes a
	// burst that re-judges the first click a machine's.
	require.Equal(t, http.StatusOK, r.fetch(t, late.Add(time.Minute), "/t/o/"+token("ann@example.net", tracking.KindOpen, 0), browser))
	require.Equal(t, http.StatusFound, r.fetch(t, late.Add(2*time.Second), "/t/c/"+token("cat@example.net", tracking.KindClick, 1), browser))
	flush()

	// Eve unsubscribes with one click; reports and replies arrive through the mailbox sync with the inbox's hook.
	require.Equal(t, http.StatusNoContent, r.oneClick(t, r.token(t, "eve@example.net")).status)
	r.advance(time.Minute)
	r.imap.Append(t, "INBOX", r.corpus(t, "postfix_hard.eml", id, "bob@example.net"))
	r.imap.Append(t, "INBOX", r.corpus(t, "arf_abuse.eml", id, "henry@example.net"))
	answer := func(from, extra, body string) []byte {
		sent := r.sentID(t, id, from)
		return []byte("From: Lead <" + from + ">\r\nTo: " + user + "\r\nSubject: Re: Hello\r\n" + extra +
			"Message-ID: <reply-" + from + ">\r\nIn-Reply-To: " + sent + "\r\nReferences: " + sent +
			"\r\nDate: " + time.Now().Format(time.RFC1123Z) + "\r\nContent-Type: text/plain\r\n\r\n" + body + "\r\n")
	}
	r.imap.Append(t, "INBOX", answer("ann@example.net", "", "Sounds good, let's talk next week."))
	r.imap.Append(t, "INBOX", answer("cat@example.net", "Auto-Submitted: auto-replied\r\n",
		"I am out of the office with limited access to email."))
	r.syncWithReplies(t, 4)

	fed := r.rollups(t)
	c := total(fed, "analytics_org_days")
	require.Equal(t, metrics.Counters{Sent: 5, Opens: 2, MachineOpens: 1, Clicks: 2, MachineClicks: 1, Replies: 1,
		IntentPositive: 1, IntentOutOfOffice: 1, BouncesHard: 1, Complaints: 1, Unsubscribes: 1}, c,
		"ann's person open takes her machine open back; cat's burst leaves a machine click; ann's reply answers her send")
	require.Equal(t, c, total(fed, "analytics_campaign_days "+id.String()))
	require.Equal(t, c, total(fed, "analytics_campaign_hours "+id.String()))
	require.Equal(t, c, total(fed, "analytics_mailbox_days "+r.box.ID.String()))
	require.Equal(t, c, total(fed, "analytics_step_days "+id.String()))
	for k := range fed {
		if len(k) > len("analytics_org_days") && k[:len("analytics_org_days")] == "analytics_org_days" {
			require.Contains(t, k, " campaign", "every count is of a campaign send")
		}
		if len(k) > len("analytics_mailbox_days") && k[:len("analytics_mailbox_days")] == "analytics_mailbox_days" {
			require.Contains(t, k, " campaign smtp_imap", "the mailbox's provider")
		}
	}

	r.query(t, func(ctx context.Context, tx pgx.Tx) error { return rollup.Rebuild(ctx, tx, r.org) })
	require.Equal(t, fed, r.rollups(t), "a rebuild from the source rows equals what the feeds added up")
}

// syncWithReplies runs the mailbox's sync with the hook the composition root installs (the inbox's reply
// understanding in front of the engine) until INBOX holds want messages.
func (r *unsubRig) syncWithReplies(t *testing.T, want int) {
	t.Helper()
	keyring, err := seal.NewKeyring(r.env.Config.SecretKey)
	require.NoError(t, err)
	s := mailsync.NewSyncer(r.env.DB.Pool, &mailbox.Credentials{Keyring: keyring, Pool: r.env.DB.Pool},
		mailbox.Dialer{TLS: mailtest.ClientTLS(), AllowInsecure: true, Timeout: 5 * time.Second}, slog.New(slog.DiscardHandler))
	rules, err := classify.NewRules()
	require.NoError(t, err)
	outbox := events.NewOutbox(r.jobs)
	s.OnInbound(replies.New(r.eng, unsubscribe.New(r.env.DB.Pool, r.signer, outbox), rules, nil).Inbound)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, outbox, r.org, r.box.ID) }()
	require.Eventually(t, func() bool {
		var stored int
		r.query(t, func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT count(*) FROM inbox_messages WHERE folder = 'INBOX'`).Scan(&stored)
		})
		return stored == want
	}, 30*time.Second, 20*time.Millisecond)
	cancel()
	require.NoError(t, <-done)
}
