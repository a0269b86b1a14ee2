package handlers

import (
	"context"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/analytics/metrics"
	"github.com/outflowhq/outflow/internal/analytics/posture"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// PostureReports serves the deliverability and warmup reports (package posture): reads of the analytics
// rollups in the caller's organization transaction, mapped onto the contract.
type PostureReports struct {
	pool *pgxpool.Pool
	now  func() time.Time
}

// NewPostureReports builds the reports over the application pool; now is the clock the deliverability
// window's defaults and the suppressions in force are read at.
func NewPostureReports(pool *pgxpool.Pool, now func() time.Time) *PostureReports {
	return &PostureReports{pool: pool, now: now}
}

// AnalyticsDeliverability reports the organization's deliverability over the UTC days from/to touch; a
// mailbox-scoped key's by_mailbox lists only its mailboxes.
func (h *PostureReports) AnalyticsDeliverability(ctx context.Context, params api.AnalyticsDeliverabilityParams) (*api.DeliverabilityDashboard, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	now := h.now()
	var from, to *time.Time
	if v, ok := params.From.Get(); ok {
		from = &v
	}
	if v, ok := params.To.Get(); ok {
		to = &v
	}
	w, err := posture.InstantWindow(from, to, now)
	if err != nil {
		return nil, err
	}
	var r posture.Deliverability
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		r, err = posture.Report(ctx, tx, org, w, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	if scope := callerMailboxScope(ctx); scope != nil {
		// A mailbox-scoped key sees its own mailboxes in the breakdown, never another's.
		r.Mailboxes = slices.DeleteFunc(r.Mailboxes, func(m posture.Mailbox) bool { return !slices.Contains(scope, m.ID) })
	}
	return deliverabilityOf(r), nil
}

// deliverabilityOf maps a report onto the contract: counts as they are, every rate, the score and the band
// from metrics.
func deliverabilityOf(r posture.Deliverability) *api.DeliverabilityDashboard {
	c := r.Totals
	score := c.Score()
	out := &api.DeliverabilityDashboard{
		From: r.Window.First, To: r.Window.End(),
		EventsTotal: postureCount(r.EventsTotal()), BounceCount: postureCount(c.Bounces()), ComplaintCount: postureCount(c.Complaints),
		UnsubscribeCount: postureCount(c.Unsubscribes), ReplyCount: postureCount(c.Replies), OpenCount: postureCount(c.HumanOpens()),
		ClickCount: postureCount(c.HumanClicks()), SuppressedRecipients: postureCount(r.Suppressed), DlqPending: postureCount(r.DeadLetters),
		IntentPositive: postureCount(c.IntentPositive), IntentNegative: postureCount(c.IntentNegative),
		IntentOutOfOffice: postureCount(c.IntentOutOfOffice), IntentQuestion: postureCount(c.IntentQuestion),
		IntentNeutral: postureCount(c.IntentNeutral), IntentAutomated: postureCount(c.IntentAutomated), EmailsSent: postureCount(c.Sent),
		BounceRate: api.NewOptFloat64(c.BounceRate()), ComplaintRate: api.NewOptFloat64(c.ComplaintRate()),
		OpenRate: api.NewOptFloat64(c.OpenRate()), ClickRate: api.NewOptFloat64(c.ClickRate()),
		ReplyRate: api.NewOptFloat64(c.ReplyRate()), PlacementSamples: postureCount(c.PlacementSamples()),
		Band: api.DeliverabilityDashboardBand(metrics.Band(score)), Score: score,
		Timeseries: make([]api.DeliverabilityDayPoint, len(r.Days)), ByMailbox: make([]api.DeliverabilityMailbox, len(r.Mailboxes)),
		ByCampaign: make([]api.DeliverabilityCampaign, len(r.Campaigns)), ByProvider: make([]api.DeliverabilityProvider, len(r.Providers)),
	}
	if rate, ok := c.SpamPlacementRate(); ok {
		out.SpamPlacementRate = api.NewOptFloat64(rate)
	}
	if rate, ok := c.InboxPlacementRate(); ok {
		out.InboxPlacementRate = api.NewOptFloat64(rate)
	}
	for i, d := range r.Days {
		out.Timeseries[i] = api.DeliverabilityDayPoint{Date: api.NewOptDate(d.Day), Sent: postureCount(d.Sent),
			Bounces: postureCount(d.Bounces()), Complaints: postureCount(d.Complaints), Opens: postureCount(d.HumanOpens()),
			Clicks: postureCount(d.HumanClicks()), Replies: postureCount(d.Replies), Unsubscribes: postureCount(d.Unsubscribes)}
	}
	for i, m := range r.Mailboxes {
		out.ByMailbox[i] = api.DeliverabilityMailbox{EmailAccountID: api.NewOptUUID(m.ID), Email: api.NewOptString(m.Email),
			Sent: postureCount(m.Sent), Bounces: postureCount(m.Bounces()), Complaints: postureCount(m.Complaints),
			BounceRate: api.NewOptFloat64(m.BounceRate()), ComplaintRate: api.NewOptFloat64(m.ComplaintRate()),
			Band: api.NewOptString(metrics.Band(m.Score()))}
	}
	for i, cp := range r.Campaigns {
		out.ByCampaign[i] = api.DeliverabilityCampaign{CampaignID: api.NewOptUUID(cp.ID), Name: api.NewOptString(cp.Name),
			Sent: postureCount(cp.Sent), Bounces: postureCount(cp.Bounces()), Complaints: postureCount(cp.Complaints),
			BounceRate: api.NewOptFloat64(cp.BounceRate()), ComplaintRate: api.NewOptFloat64(cp.ComplaintRate()),
			Band: api.NewOptString(metrics.Band(cp.Score()))}
	}
	for i, p := range r.Providers {
		out.ByProvider[i] = api.DeliverabilityProvider{Provider: api.NewOptString(p.Name), Sent: postureCount(p.Sent),
			Bounces: postureCount(p.Bounces()), Complaints: postureCount(p.Complaints), BounceRate: api.NewOptFloat64(p.BounceRate()),
			ComplaintRate: api.NewOptFloat64(p.ComplaintRate()), Band: api.NewOptString(metrics.Band(p.Score()))}
	}
	warmup := api.DeliverabilityWarmupPlacement{Samples: postureCount(r.WarmupPlacement.PlacementSamples())}
	if rate, ok := r.WarmupPlacement.InboxPlacementRate(); ok {
		warmup.InboxPlacementRate = api.NewOptFloat64(rate)
	}
	if rate, ok := r.WarmupPlacement.SpamPlacementRate(); ok {
		warmup.SpamPlacementRate = api.NewOptFloat64(rate)
	}
	out.WarmupPlacement = api.NewOptDeliverabilityWarmupPlacement(warmup)
	return out
}

// postureCount is a counter as the contract's optional integer (always present in these reports).
func postureCount(n int64) api.OptInt { return api.NewOptInt(int(n)) }
