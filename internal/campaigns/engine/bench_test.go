package engine_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// BenchmarkEngineWeek runs the week simulation of sim_test.go at 20 times its size (1,000 mailboxes, 90,000
// contacts, 100,000 leads in three campaigns) and reports the scheduler's cost against the cheapest way to
// enqueue the same sends:
//
//   - baseline: sending.EnqueueMany of the week's sends again (the same messages from the same mailboxes) into
//     the same database, 1,000 in one call and transaction; ns/op is per 1,000.
//   - outflow: the time spent inside the engine's runs over the week (every pass: gates, due leads, decisions,
//     the enqueue, the writes) per 1,000 sends it enqueued, as ns/op, so scripts/bench-ratios prints the ratio
//     (target at most 3x). It also reports that ratio (x-enqueue), the p99 of how late each send was planned
//     against its lead's due time in simulated seconds (target at most 1), the sends, and the violations of
//     the test's checks (target 0; a sink count that differs from the sends recorded is one).
//
// The sends go through the real pipeline (claim with cap and gap, hand-over, result, the engine's settle
// hook) to an in-process SMTP sink that keeps only a count, so a week's mail stays out of memory. The week runs
// once whatever b.N is.
func BenchmarkEngineWeek(b *testing.B) {
	sink := newSink(b)
	s := newSim(b, weekSpec(20), simSMTP{addr: sink.addr, user: user, pass: smtpPass})
	began := time.Now()
	s.week(b)
	week := time.Since(began)
	r := s.check(b)
	if n := int(sink.count.Load()); n != r.delivered {
		r.violations = append(r.violations, fmt.Sprintf("the sink received %d messages, %d were recorded sent", n, r.delivered))
	}
	b.Logf("week: %s for %d events and %d sends (engine %s, %d passes, %d leads looked at); %d violations\n%s",
		week.Round(time.Second), s.events, s.sends, s.scheduler.Round(time.Millisecond), s.passes, s.looked,
		len(r.violations), first(r.violations, 5))
	sends, boxes := s.recorded(b)
	require.GreaterOrEqual(b, len(sends), 1000)

	var baseline time.Duration
	b.Run("baseline", func(b *testing.B) {
		next := 0
		for b.Loop() {
			if next+1000 > len(sends) {
				next = 0
			}
			s.enqueue(b, boxes, sends[next:next+1000])
			next += 1000
		}
		baseline = b.Elapsed() / time.Duration(b.N)
	})
	b.Run("outflow", func(b *testing.B) {
		per1000 := s.scheduler * 1000 / time.Duration(s.sends)
		b.ReportMetric(float64(per1000.Nanoseconds()), "ns/op")
		b.ReportMetric(float64(per1000)/float64(baseline), "x-enqueue")
		b.ReportMetric(p99(s.lateness).Seconds(), "p99-late-s")
		b.ReportMetric(float64(s.sends), "sends")
		b.ReportMetric(s.scheduler.Seconds(), "engine-s")
		b.ReportMetric(float64(len(r.violations)), "violations")
	})
}

// sent is one of the week's sends as the engine enqueued it: the message and its mailbox.
type sent struct {
	mailbox uuid.UUID
	msg     sending.Message
}

// recorded reads the week's sends back, ordered by mailbox, with their mailboxes.
func (s *sim) recorded(tb testing.TB) ([]sent, map[uuid.UUID]dbq.Mailbox) {
	tb.Helper()
	var out []sent
	boxes := map[uuid.UUID]dbq.Mailbox{}
	s.query(tb, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT mailbox_id, to_list, cc, bcc, subject, body_text, body_html, in_reply_to,
			  thread_references, contact_id, campaign_id, step_id, step_name, variant_id, attachment_ids, signed, unsubscribe_url
			FROM send_tasks WHERE organization_id = $1 AND kind = 'campaign' ORDER BY mailbox_id, id`, s.org)
		if err != nil {
			return err
		}
		if out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (sent, error) {
			x := sent{msg: sending.Message{Kind: sending.KindCampaign}}
			m := &x.msg
			return x, row.Scan(&x.mailbox, &m.To, &m.Cc, &m.Bcc, &m.Subject, &m.Text, &m.HTML, &m.InReplyTo, &m.References,
				&m.ContactID, &m.CampaignID, &m.StepID, &m.StepName, &m.VariantID, &m.Attachments, &m.Signed, &m.UnsubscribeURL)
		}); err != nil {
			return err
		}
		for _, x := range out {
			if _, ok := boxes[x.mailbox]; !ok {
				if boxes[x.mailbox], err = dbq.New().MailboxGet(ctx, tx, dbq.MailboxGetParams{OrganizationID: s.org, ID: x.mailbox}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return out, boxes
}

// enqueue enqueues the sends in one transaction with one sending.EnqueueMany, as the engine's pass does.
func (s *sim) enqueue(tb testing.TB, boxes map[uuid.UUID]dbq.Mailbox, sends []sent) {
	tb.Helper()
	out := make([]sending.Outgoing, len(sends))
	for i, x := range sends {
		m := boxes[x.mailbox]
		out[i] = sending.Outgoing{From: &m, Message: x.msg}
	}
	require.NoError(tb, db.WithOrgTx(context.Background(), s.env.DB.Pool, s.org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := sending.EnqueueMany(ctx, tx, s.jobs, out)
		return err
	}))
}

// sink is an SMTP server that takes any login and counts the messages it accepts.
type sink struct {
	addr  string
	count atomic.Int64
}

func newSink(tb testing.TB) *sink {
	tb.Helper()
	k := &sink{}
	srv := smtp.NewServer(k)
	srv.Domain, srv.AllowInsecureAuth = "localhost", true
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	k.addr = ln.Addr().String()
	go func() { _ = srv.Serve(ln) }()
	tb.Cleanup(func() { _ = srv.Close() })
	return k
}

func (k *sink) NewSession(*smtp.Conn) (smtp.Session, error) { return &sinkSession{k: k}, nil }

type sinkSession struct{ k *sink }

func (s *sinkSession) AuthMechanisms() []string { return []string{sasl.Plain} }
func (s *sinkSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(string, string, string) error { return nil }), nil
}
func (s *sinkSession) Mail(string, *smtp.MailOptions) error { return nil }
func (s *sinkSession) Rcpt(string, *smtp.RcptOptions) error { return nil }
func (s *sinkSession) Data(r io.Reader) error {
	_, err := io.Copy(io.Discard, r)
	s.k.count.Add(1)
	return err
}
func (s *sinkSession) Reset()        {}
func (s *sinkSession) Logout() error { return nil }
