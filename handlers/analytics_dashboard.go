package handlers

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/analytics/dashboard"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// AnalyticsOrg serves the organization reports: the dashboard and the usage overview. Package
// dashboard computes them from the rollups; this side authorizes and maps.
type AnalyticsOrg struct {
	pool  *pgxpool.Pool
	grace time.Duration
	now   func() time.Time
}

// NewAnalyticsOrg builds the organization reports over the application pool; grace is the
// deployment's domain-authentication grace the mailbox health rules apply, now the process clock.
func NewAnalyticsOrg(pool *pgxpool.Pool, grace time.Duration, now func() time.Time) *AnalyticsOrg {
	return &AnalyticsOrg{pool: pool, grace: grace, now: now}
}

// AnalyticsDashboard answers the dashboard over the period asked (an absent or unknown one is 7d).
func (h *AnalyticsOrg) AnalyticsDashboard(ctx context.Context, params api.AnalyticsDashboardParams) (*api.DashboardAnalytics, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var d dashboard.Dashboard
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		d, err = dashboard.Build(ctx, tx, org, params.Period.Value, callerMailboxScope(ctx), h.grace, h.now())
		return err
	})
	if err != nil {
		return nil, err
	}
	t := d.Totals
	out := &api.DashboardAnalytics{Period: api.DashboardAnalyticsPeriod(d.Period),
		OverallStats: api.OverallStats{TotalEmailsSent: analyticsCount(t.Sent), TotalOpens: analyticsCount(t.Opens), MachineOpens: analyticsCount(t.MachineOpens),
			TotalClicks: analyticsCount(t.Clicks), MachineClicks: analyticsCount(t.MachineClicks), TotalReplies: analyticsCount(t.Replies),
			PositiveReplies: analyticsCount(t.IntentPositive), TotalBounces: analyticsCount(t.Bounces()), TotalDelivered: analyticsCount(t.Delivered()),
			OpenRate: api.NewOptFloat64(t.OpenRate()), ClickRate: api.NewOptFloat64(t.ClickRate()), ReplyRate: api.NewOptFloat64(t.ReplyRate()),
			BounceRate: api.NewOptFloat64(t.BounceRate()), ActiveCampaigns: api.NewOptInt(d.ActiveCampaigns),
			ActiveAccounts: api.NewOptInt(d.ActiveAccounts)},
		RecentActivity: make([]api.RecentActivity, len(d.Recent)), TopCampaigns: make([]api.TopCampaign, len(d.Top)),
		AccountHealth: healthSummaryOf(d.Health),
		DailyTrend:    make([]api.DailyTrendPoint, len(d.Trend)),
	}
	for i, a := range d.Recent {
		r := api.RecentActivity{Type: api.NewOptString(a.EventType), CampaignID: api.NewOptUUID(a.CampaignID),
			CampaignName: api.NewOptString(a.CampaignName), Timestamp: api.NewOptDateTime(a.CreatedAt)}
		if a.ContactID.Valid {
			r.ContactID = api.NewOptUUID(a.ContactID.UUID)
			r.ContactEmail = api.NewOptString(a.ContactEmail)
		}
		out.RecentActivity[i] = r
	}
	for i, c := range d.Top {
		out.TopCampaigns[i] = api.TopCampaign{CampaignID: api.NewOptUUID(c.ID), Name: api.NewOptString(c.Name), Status: api.NewOptString(c.Status),
			EmailsSent: analyticsCount(c.Sent), OpenRate: api.NewOptFloat64(c.OpenRate()), ClickRate: api.NewOptFloat64(c.ClickRate()),
			ReplyRate: api.NewOptFloat64(c.ReplyRate())}
	}
	for i, p := range d.Trend {
		out.DailyTrend[i] = api.DailyTrendPoint{Date: api.NewOptDate(p.Date), Sent: analyticsCount(p.Sent), Opens: analyticsCount(p.Opens),
			Clicks: analyticsCount(p.Clicks), Replies: analyticsCount(p.Replies)}
	}
	return out, nil
}

// AnalyticsUsage answers the usage overview over the period asked (an absent or unknown one is day). The api
// block is a placeholder of zeros: the API key usage endpoints report calls.
func (h *AnalyticsOrg) AnalyticsUsage(ctx context.Context, params api.AnalyticsUsageParams) (*api.UsageOverview, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	var u dashboard.Usage
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		u, err = dashboard.BuildUsage(ctx, tx, org, params.Period.Value, callerMailboxScope(ctx), h.grace, h.now())
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.UsageOverview{Period: api.UsageOverviewPeriod(u.Period),
		EmailAccounts: api.NewOptUsageOverviewEmailAccounts(api.UsageOverviewEmailAccounts{Total: api.NewOptInt(u.Mailboxes.Total),
			Active: api.NewOptInt(u.Mailboxes.Active), InWarmup: api.NewOptInt(u.Mailboxes.InWarmup), WithErrors: api.NewOptInt(u.Mailboxes.WithErrors)}),
		Campaigns: api.NewOptUsageOverviewCampaigns(api.UsageOverviewCampaigns{Total: analyticsCount(u.Campaigns.Total),
			Active: analyticsCount(u.Campaigns.Active), Paused: analyticsCount(u.Campaigns.Paused), Draft: analyticsCount(u.Campaigns.Draft),
			EmailsSent: analyticsCount(u.EmailsSent)}),
		Contacts: api.NewOptUsageOverviewContacts(api.UsageOverviewContacts{Total: analyticsCount(u.Contacts.Total),
			Subscribed: analyticsCount(u.Contacts.Subscribed), AddedToday: analyticsCount(u.Contacts.Added)}),
		API: api.NewOptUsageOverviewAPI(api.UsageOverviewAPI{TotalCalls: api.NewOptInt(0), DailyLimit: api.NewOptInt(0),
			TopEndpoints: []api.UsageOverviewAPITopEndpointsItem{}}),
	}
	// user_id is the person behind a session or OAuth grant; an API key acts for no one.
	if p := auth.PrincipalFrom(ctx); p != nil && p.Kind != auth.KindAPIKey && p.UserID != uuid.Nil {
		out.UserID = api.NewOptUUID(p.UserID)
	}
	return out, nil
}

// healthSummaryOf maps the health buckets, repeated under the earlier *_accounts names.
func healthSummaryOf(b dashboard.Buckets) api.AccountHealthSummary {
	out := api.AccountHealthSummary{Total: b.Total, Healthy: b.Healthy, Warning: b.Warning, Error: b.Error}
	//lint:ignore SA1019 the earlier names stay filled for clients of the reference that still read them
	out.TotalAccounts, out.HealthyAccounts, out.WarningAccounts, out.ErrorAccounts = api.NewOptInt(b.Total), api.NewOptInt(b.Healthy), api.NewOptInt(b.Warning), api.NewOptInt(b.Error)
	return out
}

// analyticsCount is a rollup count as the contract's optional integer, for every analytics report.
func analyticsCount(n int64) api.OptInt { return api.NewOptInt(int(n)) }
