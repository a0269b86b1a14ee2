// Package rolluptest reads the analytics counter tables back for tests, one way for every test that checks
// what the rollup feeds kept or a rebuild recomputed.
package rolluptest

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/internal/analytics/metrics"
)

// Querier is what the rows are read through: an organization's transaction (row-level security applies) or
// an owner pool (the organization filter alone selects).
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// counters are the counter columns, in metrics.Counters' order (and Values').
const counters = `sent, opens, machine_opens, clicks, machine_clicks, replies, intent_positive, intent_negative,
  intent_question, intent_neutral, intent_out_of_office, intent_automated, bounces_hard, bounces_soft, complaints,
  unsubscribes, placement_inbox, placement_spam`

// keys are each counter table's key columns, as text.
var keys = map[string]string{
	"analytics_org_days":       "day::text || ' ' || kind",
	"analytics_campaign_days":  "campaign_id::text || ' ' || day::text",
	"analytics_step_days":      "campaign_id::text || ' ' || step_id::text || ' ' || variant_id::text || ' ' || day::text",
	"analytics_campaign_hours": "campaign_id::text || ' ' || (hour AT TIME ZONE 'UTC')::text",
	"analytics_mailbox_days":   "mailbox_id::text || ' ' || day::text || ' ' || kind || ' ' || provider",
}

// Rows is every counter row of org whose counters are not all zero, keyed "table key" (the key columns
// joined by spaces: day and kind; campaign and day; campaign, step, variant and day; campaign and UTC hour;
// mailbox, day, kind and provider).
func Rows(ctx context.Context, q Querier, org uuid.UUID) (map[string]metrics.Counters, error) {
	out := map[string]metrics.Counters{}
	for table, key := range keys {
		rows, err := q.Query(ctx, fmt.Sprintf(`SELECT %s, %s FROM %s
			WHERE organization_id = $1 AND (%s) <> (0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0)`, key, counters, table, counters), org)
		if err != nil {
			return nil, err
		}
		var k string
		var c metrics.Counters
		_, err = pgx.ForEachRow(rows, []any{&k, &c.Sent, &c.Opens, &c.MachineOpens, &c.Clicks, &c.MachineClicks, &c.Replies,
			&c.IntentPositive, &c.IntentNegative, &c.IntentQuestion, &c.IntentNeutral, &c.IntentOutOfOffice,
			&c.IntentAutomated, &c.BouncesHard, &c.BouncesSoft, &c.Complaints, &c.Unsubscribes, &c.PlacementInbox,
			&c.PlacementSpam}, func() error {
			out[table+" "+k] = c
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Values are c's counters in the tables' column order, for a compact comparison.
func Values(c metrics.Counters) []int64 {
	return []int64{c.Sent, c.Opens, c.MachineOpens, c.Clicks, c.MachineClicks, c.Replies, c.IntentPositive,
		c.IntentNegative, c.IntentQuestion, c.IntentNeutral, c.IntentOutOfOffice, c.IntentAutomated, c.BouncesHard,
		c.BouncesSoft, c.Complaints, c.Unsubscribes, c.PlacementInbox, c.PlacementSpam}
}
