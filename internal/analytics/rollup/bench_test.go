package rollup_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/analytics/metrics"
	"github.com/outflowhq/outflow/internal/analytics/rollup"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// BenchmarkRollupMaintenance measures what keeping the rollups costs per 1,000 tracking events (one op is
// 1,000 events): baseline stores them alone, as the tracking batcher's one insert does
// (TrackingEventsInsert, in one organization transaction); outflow stores the same events and applies their
// facts (each a send's first open, a quarter of them a machine's: the most a batch can change) to every
// counter table in the same transaction. The events are 1,000 sends' opens within one minute (a busy
// organization's batches), of 10 campaigns with 5 steps and 2 variants, from 20 mailboxes. Target: outflow at
// most 1.5x baseline. (The tracking feed also reads its sends' opens and clicks before and after a batch,
// RollupEngagement, which this does not measure.)
func BenchmarkRollupMaintenance(b *testing.B) {
	r := newRig(b)
	ctx := context.Background()
	const events = 1000
	campaigns := make([]uuid.UUID, 10)
	for i := range campaigns {
		campaigns[i] = r.campaign(b, "Bench")
	}
	steps, variants, boxes := ids(5), ids(2), ids(20)
	tasks := make([]rollup.Fact, events)
	start := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for i := range tasks {
		f := rollup.Fact{At: start.Add(time.Duration(i) * time.Minute / events), Kind: rollup.KindCampaign,
			Campaign: campaigns[i%len(campaigns)], Step: steps[i%len(steps)], Variant: variants[i%len(variants)],
			Mailbox: boxes[i%len(boxes)], Provider: "gmail", Counters: metrics.Counters{Opens: 1}}
		if i%4 == 0 {
			f.MachineOpens = 1
		}
		tasks[i] = f
	}
	taskIDs := ids(events)
	insert := func(ctx context.Context, tx pgx.Tx) error {
		p := dbq.TrackingEventsInsertParams{OrganizationID: r.org}
		for i, f := range tasks {
			id, err := uuid.NewV7()
			if err != nil {
				return err
			}
			verdict, rule := "human", "human"
			if f.MachineOpens == 1 {
				verdict, rule = "machine", "privacy_proxy"
			}
			p.Ids, p.TaskIds, p.Kinds, p.Ats = append(p.Ids, id), append(p.TaskIds, taskIDs[i]), append(p.Kinds, "open"), append(p.Ats, f.At)
			p.Uas, p.IpHashes = append(p.Uas, "Mozilla/5.0 (Windows NT 10.0; Win64; x64)"), append(p.IpHashes, "h")
			p.Networks, p.Scanners, p.Probables = append(p.Networks, "192.0.2.0/24"), append(p.Scanners, ""), append(p.Probables, false)
			p.Proxies, p.LinkIndexes, p.Urls = append(p.Proxies, f.MachineOpens == 1), append(p.LinkIndexes, 0), append(p.Urls, "")
			p.Tickets, p.Verdicts, p.Rules = append(p.Tickets, false), append(p.Verdicts, verdict), append(p.Rules, rule)
			p.Dues, p.Pendings = append(p.Dues, f.At), append(p.Pendings, false)
		}
		_, err := dbq.New().TrackingEventsInsert(ctx, tx, p)
		return err
	}
	run := func(b *testing.B, work func(ctx context.Context, tx pgx.Tx) error) {
		for b.Loop() {
			require.NoError(b, db.WithOrgTx(ctx, r.d.Pool, r.org, work))
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/1000events")
	}
	b.Run("baseline", func(b *testing.B) { run(b, insert) })
	b.Run("outflow", func(b *testing.B) {
		run(b, func(ctx context.Context, tx pgx.Tx) error {
			if err := insert(ctx, tx); err != nil {
				return err
			}
			return rollup.Apply(ctx, tx, r.org, tasks)
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
