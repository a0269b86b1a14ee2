package sending_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/testkit/mailtest"
)

// BenchmarkSendPipeline compares sending one message through the pipeline (the task rows and their jobs
// written in one transaction, as a campaign step enqueues them; River handing each job to a worker; the claim
// under the mailbox lock with the day's cap and the gap checked and charged; the hand-over on the mailbox's
// pooled SMTP session; the result written) with a raw go-smtp loop sending the same message over one
// authenticated session to the same in-process sink. Each outflow run sends from a fresh mailbox with
// campaign_limit 5000 and no gap, and checks after the run that its day's counter matches what was sent and
// never passed the cap. outflow-append is the same from a mailbox whose server files no copies of what it sends,
// so every message's copy is also appended to its Sent folder (reported beside the ratio, not in it).
func BenchmarkSendPipeline(b *testing.B) {
	r := newRig(b)
	ctx := context.Background()
	body := bytes.Repeat([]byte("Hello, this is a benchmark message line.\r\n"), 40)
	raw := append([]byte("From: ada@example.com\r\nTo: bob@example.com\r\nSubject: Benchmark\r\n\r\n"), body...)

	b.Run("baseline", func(b *testing.B) {
		dialer := mailbox.Dialer{TLS: mailtest.ClientTLS(), AllowInsecure: true}
		c, err := dialer.SMTP(ctx, serverOf(service(b, r.smtp.Addr, smtpPass)))
		require.NoError(b, err)
		defer func() { _ = c.Quit() }()
		for b.Loop() {
			if err := c.SendMail(user, []string{"bob@example.com"}, bytes.NewReader(raw)); err != nil {
				b.Fatal(err)
			}
		}
	})

	r.env.StartWorkers(b)
	run := 0
	// outflow sends from a mailbox whose server files its own copies in Sent (as Gmail and Microsoft 365 do), so
	// it does what the baseline does; outflow-append from one whose server files none, so each sent message
	// also gets its copy appended to Sent over IMAP (send_sent_copy), work the baseline does not do.
	sendFrom := func(habit string) func(b *testing.B) {
		return func(b *testing.B) {
			if b.N >= 5000 {
				b.Fatalf("%d sends (and one warm-up) would pass one mailbox's daily cap of 5000; shorten -benchtime", b.N)
			}
			run++
			box, err := r.c.MailboxesCreate(ctx, &api.CreateEmailAccount{Provider: api.CreateEmailAccountProviderSMTPImap,
				Email: fmt.Sprintf("ada+%d@example.com", run), Name: "Ada", SMTP: api.NewOptMailService(service(b, r.smtp.Addr, smtpPass)),
				Imap: r.imapService(b), CampaignLimit: api.NewOptInt(5000), MinWaitTime: api.NewOptInt(0)}, api.MailboxesCreateParams{})
			require.NoError(b, err)
			require.NoError(b, db.WithOrgTx(ctx, r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
				_, err := tx.Exec(ctx, `UPDATE mailboxes SET sent_copies = $2 WHERE id = $1`, box.ID, habit)
				return err
			}))
			enqueue := func(n int) {
				require.NoError(b, db.WithOrgTx(ctx, r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
					m, err := dbq.New().MailboxGet(ctx, tx, dbq.MailboxGetParams{OrganizationID: r.org, ID: box.ID})
					if err != nil {
						return err
					}
					out := make([]sending.Outgoing, n)
					for i := range out {
						out[i] = sending.Outgoing{From: &m, Message: sending.Message{Kind: sending.KindDirect,
							To: []string{fmt.Sprintf("lead%d@example.com", i)}, Subject: "Benchmark", Text: string(body), Mode: "smart"}}
					}
					_, err = sending.EnqueueMany(ctx, tx, r.jobs, out)
					return err
				}))
			}
			// Progress is read at the sink (in memory) while the pipeline runs, so the wait adds no database load;
			// the results written are counted once at the end.
			wait := func(sink, sent int) {
				deadline := time.Now().Add(2 * time.Minute)
				for r.smtp.Count() < sink || r.sent(b, box.ID) < sent {
					if time.Now().After(deadline) {
						b.Fatalf("only %d of %d sends went out", r.sent(b, box.ID), sent)
					}
					time.Sleep(2 * time.Millisecond)
				}
			}
			// One send first, untimed: the mailbox's SMTP session is open and its sync has logged in, as in a
			// pipeline that is already running.
			before := r.smtp.Count()
			enqueue(1)
			wait(before+1, 1)
			b.ResetTimer()
			enqueue(b.N)
			wait(before+1+b.N, 1+b.N)
			b.StopTimer()
			var capped, total int
			require.NoError(b, db.WithOrgTx(ctx, r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
				return tx.QueryRow(ctx, `SELECT coalesce(sum(capped), 0), coalesce(sum(total), 0) FROM mailbox_send_days WHERE mailbox_id = $1`, box.ID).Scan(&capped, &total)
			}))
			require.Equal(b, b.N+1, capped, "every send charged to the day once")
			require.LessOrEqual(b, capped, 5000)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sends/s")
		}
	}
	b.Run("outflow", sendFrom(sending.SentCopiesServer))
	b.Run("outflow-append", sendFrom(sending.SentCopiesAppend))
}
