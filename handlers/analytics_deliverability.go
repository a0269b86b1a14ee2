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
		EventsTotal: analyticsCount(r.EventsTotal()), BounceCount: analyticsCount(c.Bounces()), ComplaintCount: analyticsCount(c.Complaints),
		UnsubscribeCount: analyticsCount(c.Unsubscribes), ReplyCount: analyticsCount(c.Replies), OpenCount: analyticsCount(c.HumanOpens()),
		ClickCount: analyticsCount(c.HumanClicks()), SuppressedRecipients: analyticsCount(r.Suppressed), DlqPending: analyticsCount(r.DeadLetters),
		IntentPositive: analyticsCount(c.IntentPositive), IntentNegative: analyticsCount(c.IntentNegative),
		IntentOutOfOffice: analyticsCount(c.IntentOutOfOffice), IntentQuestion: analyticsCount(c.IntentQuestion),
		IntentNeutral: analyticsCount(c.IntentNeutral), IntentAutomated: analyticsCount(c.IntentAutomated), EmailsSent: analyticsCount(c.Sent),
		BounceRate: api.NewOptFloat64(c.BounceRate()), ComplaintRate: api.NewOptFloat64(c.ComplaintRate()),
		OpenRate: api.NewOptFloat64(c.OpenRate()), ClickRate: api.NewOptFloat64(c.ClickRate()),
		ReplyRate: api.NewOptFloat64(c.ReplyRate()), PlacementSamples: analyticsCount(c.PlacementSamples()),
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
		out.Timeseries[i] = api.DeliverabilityDayPoint{Date: api.NewOptDate(d.Day), Sent: analyticsCount(d.Sent),
			Bounces: analyticsCount(d.Bounces()), Complaints: analyticsCount(d.Complaints), Opens: analyticsCount(d.HumanOpens()),
			Clicks: analyticsCount(d.HumanClicks()), Replies: analyticsCount(d.Replies), Unsubscribes: analyticsCount(d.Unsubscribes)}
	}
	for i, m := range r.Mailboxes {
		out.ByMailbox[i] = api.DeliverabilityMailbox{EmailAccountID: api.NewOptUUID(m.ID), Email: api.NewOptString(m.Email),
			Sent: analyticsCount(m.Sent), Bounces: analyticsCount(m.Bounces()), Complaints: analyticsCount(m.Complaints),
			BounceRate: api.NewOptFloat64(m.BounceRate()), ComplaintRate: api.NewOptFloat64(m.ComplaintRate()),
			Band: api.NewOptString(metrics.Band(m.Score()))}
	}
	for i, cp := range r.Campaigns {
		out.ByCampaign[i] = api.DeliverabilityCampaign{CampaignID: api.NewOptUUID(cp.ID), Name: api.NewOptString(cp.Name),
			Sent: analyticsCount(cp.Sent), Bounces: analyticsCount(cp.Bounces()), Complaints: analyticsCount(cp.Complaints),
			BounceRate: api.NewOptFloat64(cp.BounceRate()), ComplaintRate: api.NewOptFloat64(cp.ComplaintRate()),
			Band: api.NewOptString(metrics.Band(cp.Score()))}
	}
	for i, p := range r.Providers {
		out.ByProvider[i] = api.DeliverabilityProvider{Provider: api.NewOptString(p.Name), Sent: analyticsCount(p.Sent),
			Bounces: analyticsCount(p.Bounces()), Complaints: analyticsCount(p.Complaints), BounceRate: api.NewOptFloat64(p.BounceRate()),
			ComplaintRate: api.NewOptFloat64(p.ComplaintRate()), Band: api.NewOptString(metrics.Band(p.Score()))}
	}
	warmup := api.DeliverabilityWarmupPlacement{Samples: analyticsCount(r.WarmupPlacement.PlacementSamples())}
	if rate, ok := r.WarmupPlacement.InboxPlacementRate(); ok {
		warmup.InboxPlacementRate = api.NewOptFloat64(rate)
	}
	if rate, ok := r.WarmupPlacement.SpamPlacementRate(); ok {
		warmup.SpamPlacementRate = api.NewOptFloat64(rate)
	}
	out.WarmupPlacement = api.NewOptDeliverabilityWarmupPlacement(warmup)
	return out
}
