package rollup

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/analytics/metrics"
)

var queries = dbq.New()

// The kinds a fact counts for (analytics_org_days.kind and analytics_mailbox_days.kind). The rollup queries
// map a send's kind to them: campaign and warmup as they are, direct and reply as direct.
const (
	KindCampaign = "campaign"
	KindDirect   = "direct"
	KindWarmup   = "warmup"
)

// Fact is one change to the counters: what happened (the deltas) when and to what. The feeds build facts from
// the rows they just wrote; Apply adds them to every counter table they belong to.
type Fact struct {
	// At is when it happened; its UTC day and hour key the rows.
	At time.Time
	// Kind is KindCampaign, KindDirect or KindWarmup.
	Kind string
	// Campaign, Step, Variant and Mailbox attribute the fact (uuid.Nil when none).
	Campaign, Step, Variant, Mailbox uuid.UUID
	// Provider is the mailbox's provider (mailboxes.provider) when the fact has a mailbox.
	Provider string
	// Counters are the deltas (negative: an undo).
	metrics.Counters
}

// The counter tables, as RollupApply numbers them.
const (
	tableOrgDays = iota
	tableCampaignDays
	tableStepDays
	tableCampaignHours
	tableMailboxDays
)

// key is one row of one counter table: the fields its primary key does not name are zero.
type key struct {
	table                              int32
	day, hour                          time.Time
	kind                               string
	campaign, step, variant, mailboxID uuid.UUID
}

// compareKeys orders rows by table, then by every key column, so batches lock shared rows in one order.
func compareKeys(a, b key) int {
	return cmp.Or(cmp.Compare(a.table, b.table), a.day.Compare(b.day), a.hour.Compare(b.hour), cmp.Compare(a.kind, b.kind),
		bytes.Compare(a.campaign[:], b.campaign[:]), bytes.Compare(a.step[:], b.step[:]), bytes.Compare(a.variant[:], b.variant[:]),
		bytes.Compare(a.mailboxID[:], b.mailboxID[:]))
}

// Apply adds facts to every counter table of org in tx, in one statement: the facts are summed per table row
// first, rows whose deltas sum to zero are left out, and nothing is sent when none remains. Campaign rows are
// written only while the campaign exists (see the package doc).
func Apply(ctx context.Context, tx pgx.Tx, org uuid.UUID, facts []Fact) error {
	if len(facts) == 0 {
		return nil
	}
	sums := map[key]*metrics.Counters{}
	providers := map[key]string{}
	var order []key
	add := func(k key, f Fact) {
		c := sums[k]
		if c == nil {
			c = &metrics.Counters{}
			sums[k] = c
			order = append(order, k)
		}
		c.Add(f.Counters)
		if k.table == tableMailboxDays && providers[k] == "" {
			providers[k] = f.Provider
		}
	}
	for _, f := range facts {
		at := f.At.UTC()
		day := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
		add(key{table: tableOrgDays, day: day, kind: f.Kind}, f)
		if f.Campaign != uuid.Nil {
			add(key{table: tableCampaignDays, day: day, campaign: f.Campaign}, f)
			add(key{table: tableCampaignHours, hour: at.Truncate(time.Hour), campaign: f.Campaign}, f)
			if f.Step != uuid.Nil {
				add(key{table: tableStepDays, day: day, campaign: f.Campaign, step: f.Step, variant: f.Variant}, f)
			}
		}
		if f.Mailbox != uuid.Nil {
			add(key{table: tableMailboxDays, day: day, kind: f.Kind, mailboxID: f.Mailbox}, f)
		}
	}
	// Every transaction locks the rows it adds to in one order (by table, then key), so two batches sharing
	// rows wait for each other instead of deadlocking.
	slices.SortFunc(order, compareKeys)
	p := dbq.RollupApplyParams{OrganizationID: org}
	for _, k := range order {
		c := *sums[k]
		if c == (metrics.Counters{}) {
			continue
		}
		day, hour := k.day, k.hour
		if k.table == tableCampaignHours {
			day = time.Date(hour.Year(), hour.Month(), hour.Day(), 0, 0, 0, 0, time.UTC)
		} else {
			hour = day
		}
		p.Tbls, p.Days, p.Hours, p.Kinds = append(p.Tbls, k.table), append(p.Days, day), append(p.Hours, hour), append(p.Kinds, k.kind)
		p.CampaignIds, p.StepIds = append(p.CampaignIds, k.campaign), append(p.StepIds, k.step)
		p.VariantIds, p.MailboxIds = append(p.VariantIds, k.variant), append(p.MailboxIds, k.mailboxID)
		p.Providers = append(p.Providers, providers[k])
		p.Sent, p.Opens, p.MachineOpens = append(p.Sent, c.Sent), append(p.Opens, c.Opens), append(p.MachineOpens, c.MachineOpens)
		p.Clicks, p.MachineClicks = append(p.Clicks, c.Clicks), append(p.MachineClicks, c.MachineClicks)
		p.Replies = append(p.Replies, c.Replies)
		p.IntentPositive, p.IntentNegative = append(p.IntentPositive, c.IntentPositive), append(p.IntentNegative, c.IntentNegative)
		p.IntentQuestion, p.IntentNeutral = append(p.IntentQuestion, c.IntentQuestion), append(p.IntentNeutral, c.IntentNeutral)
		p.IntentOutOfOffice = append(p.IntentOutOfOffice, c.IntentOutOfOffice)
		p.IntentAutomated = append(p.IntentAutomated, c.IntentAutomated)
		p.BouncesHard, p.BouncesSoft = append(p.BouncesHard, c.BouncesHard), append(p.BouncesSoft, c.BouncesSoft)
		p.Complaints, p.Unsubscribes = append(p.Complaints, c.Complaints), append(p.Unsubscribes, c.Unsubscribes)
		p.PlacementInbox, p.PlacementSpam = append(p.PlacementInbox, c.PlacementInbox), append(p.PlacementSpam, c.PlacementSpam)
	}
	if len(p.Tbls) == 0 {
		return nil
	}
	return queries.RollupApply(ctx, tx, p)
}

// Rebuild deletes org's counter rows and recomputes them from the source rows (see the package doc), in tx: a
// caller running it in the organization's transaction sees no half-built counters.
func Rebuild(ctx context.Context, tx pgx.Tx, org uuid.UUID) error {
	if err := queries.RollupClear(ctx, tx, org); err != nil {
		return err
	}
	return queries.RollupRebuild(ctx, tx, org)
}
