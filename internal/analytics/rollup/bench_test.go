package rollup_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/analytics/rollup"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// errUndo rolls a benchmark op's transaction back, so every op meets the sends as they were seeded.
var errUndo = errors.New("undo")

// BenchmarkRollupMaintenance measures what keeping the rollups costs per 1,000 tracking events (one op is
// 1,000 events), as the tracking writer keeps them: baseline stores the events alone (TrackingEventsInsert, in
// one organization transaction); outflow stores the same events and counts what they changed on every counter
// table (rollup.Count, from each send's engagement before and after the batch), in the same transaction. (The writer reads the engagement before with the sends it reads anyway,
// TrackingTasks, and derives the after in memory; BenchmarkTrackingIngest measures the whole writer.) Each op's
// transaction is rolled back, so every op meets its sends unopened. The 1,000 events are what 250 sends'
// readers leave within one minute, as BenchmarkTrackingIngest cycles them: an open through a privacy proxy (a
// machine's), the reader's open, and two clicks; so each op counts 250 first opens a person took back from
// machine-only and 250 first clicks. The sends are of 10 campaigns with 5 steps and 2
// variants, from 20 mailboxes. Target: outflow at most 1.5x baseline. (BENCH_FIRST_OPENS=1 makes every event
// a distinct send's first open instead: the most one batch can change.)
func BenchmarkRollupMaintenance(b *testing.B) {
	r := newRig(b)
	ctx := context.Background()
	const events = 1000
	perSend := 4
	if os.Getenv("BENCH_FIRST_OPENS") != "" {
		perSend = 1
	}
	campaigns := make([]uuid.UUID, 10)
	for i := range campaigns {
		campaigns[i] = r.campaign(b, "Bench")
	}
	boxes := ids(20)
	for _, box := range boxes {
		r.exec(b, `INSERT INTO mailboxes (organization_id, id, email, provider) VALUES ($1, $2::uuid, $2::uuid::text || '@acme.example', 'gmail')`,
			r.org, box)
	}
	steps, variants, tasks := ids(5), ids(2), ids(events/perSend)
	start := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	contacts := ids(len(tasks))
	for i, task := range tasks {
		contact := contacts[i]
		r.exec(b, `INSERT INTO contacts (organization_id, id, email) VALUES ($1, $2::uuid, $2::uuid::text || '@example.net')`, r.org, contact)
		r.exec(b, `INSERT INTO send_tasks (organization_id, id, kind, status, mailbox_id, to_email, campaign_id, step_id,
			variant_id, contact_id, sent_at) VALUES ($1, $2, 'campaign', 'sent', $3, 'lead@example.net', $4, $5, $6, $7, $8)`,
			r.org, task, boxes[i%len(boxes)], campaigns[i%len(campaigns)], steps[i%len(steps)], variants[i%len(variants)],
			contact, start.Add(-time.Hour))
	}
	// As autovacuum would after a load this size.
	r.exec(b, `ANALYZE mailboxes, contacts, send_tasks, tracking_events, campaigns`)
	insert := func(ctx context.Context, tx pgx.Tx) error {
		p := dbq.TrackingEventsInsertParams{OrganizationID: r.org}
		for i := range events {
			id, err := uuid.NewV7()
			if err != nil {
				return err
			}
			task, at := tasks[i/perSend], start.Add(time.Duration(i)*time.Minute/events)
			kind, verdict, rule, proxy, link, url := "open", "human", "human", false, int32(0), ""
			switch {
			case i%perSend == 0:
				verdict, rule, proxy = "machine", "privacy_proxy", true
			case i%perSend >= 2:
				kind, link, url = "click", int32(i%perSend-2), "https://shop.example.com/spring"
			}
			p.Ids, p.TaskIds, p.Kinds, p.Ats = append(p.Ids, id), append(p.TaskIds, task), append(p.Kinds, kind), append(p.Ats, at)
			p.Uas, p.IpHashes = append(p.Uas, "Mozilla/5.0 (Windows NT 10.0; Win64; x64)"), append(p.IpHashes, "h")
			p.Networks, p.Scanners, p.Probables = append(p.Networks, "192.0.2.0/24"), append(p.Scanners, ""), append(p.Probables, false)
			p.Proxies, p.LinkIndexes, p.Urls = append(p.Proxies, proxy), append(p.LinkIndexes, link), append(p.Urls, url)
			p.Tickets, p.Verdicts, p.Rules = append(p.Tickets, false), append(p.Verdicts, verdict), append(p.Rules, rule)
			p.Dues, p.Pendings, p.Countries = append(p.Dues, at), append(p.Pendings, false), append(p.Countries, "")
		}
		_, err := dbq.New().TrackingEventsInsert(ctx, tx, p)
		return err
	}
	run := func(b *testing.B, work func(ctx context.Context, tx pgx.Tx) error) {
		for b.Loop() {
			err := db.WithOrgTx(ctx, r.d.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
				if err := work(ctx, tx); err != nil {
					return err
				}
				return errUndo
			})
			if !errors.Is(err, errUndo) {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/1000events")
	}
	b.Run("baseline", func(b *testing.B) { run(b, insert) })
	changes := make([]rollup.Change, len(tasks))
	for i := range changes {
		changes[i].Before = rollup.Engagement{Kind: rollup.KindCampaign, Campaign: campaigns[i%len(campaigns)],
			Step: steps[i%len(steps)], Variant: variants[i%len(variants)], Mailbox: boxes[i%len(boxes)], Provider: "gmail"}
		changes[i].After = changes[i].Before
	}
	for i := range events {
		at, c := start.Add(time.Duration(i)*time.Minute/events), &changes[i/perSend]
		switch {
		case i%perSend == 0:
			c.After = c.After.Open(at, false)
		case i%perSend == 1:
			c.After = c.After.Open(at, true)
		default:
			c.After = c.After.Click(at, true)
		}
	}
	b.Run("outflow", func(b *testing.B) {
		run(b, func(ctx context.Context, tx pgx.Tx) error {
			if err := insert(ctx, tx); err != nil {
				return err
			}
			return rollup.Count(ctx, tx, r.org, changes)
		})
	})
}

func ids(n int) []uuid.UUID {
	out := make([]uuid.UUID, n)
	for i := range out {
		out[i] = uuid.New()
	}
	return out
}
