package handlers

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/analytics/campaignstats"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// AnalyticsCampaigns serves the campaign reports: one campaign's analytics, days and hours, and the comparison.
// They read rollups (campaignstats); now is the clock "today" and the report's date range end come from.
type AnalyticsCampaigns struct {
	pool *pgxpool.Pool
	now  func() time.Time
}

// NewAnalyticsCampaigns builds the campaign reports over the application pool and the process clock.
func NewAnalyticsCampaigns(pool *pgxpool.Pool, now func() time.Time) *AnalyticsCampaigns {
	return &AnalyticsCampaigns{pool: pool, now: now}
}

// AnalyticsCampaignGet answers one campaign's summary, steps and engagement.
func (h *AnalyticsCampaigns) AnalyticsCampaignGet(ctx context.Context, params api.AnalyticsCampaignGetParams) (*api.CampaignAnalytics, error) {
	org, err := teamCaller(ctx, auth.ReadAnalytics, "READ_ANALYTICS", auth.ViewAnalytics)
	if err != nil {
		return nil, err
	}
	var r campaignstats.Report
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		r, err = campaignstats.Get(ctx, tx, org, params.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	t := r.Totals
	out := &api.CampaignAnalytics{CampaignID: r.ID, Name: r.Name, Status: r.Status,
		DateRange: api.NewOptDateRange(api.DateRange{From: api.NewOptDateTime(r.CreatedAt.UTC()), To: api.NewOptDateTime(h.now().UTC())}),
		Summary: api.CampaignAnalyticsSummary{TotalContacts: analyticsCount(r.TotalContacts), EmailsSent: analyticsCount(t.Sent),
			EmailsPending: analyticsCount(r.PendingContacts), UniqueOpens: analyticsCount(r.People.Opened), MachineOpens: analyticsCount(r.People.MachineOpened),
			UniqueClicks: analyticsCount(r.People.Clicked), MachineClicks: analyticsCount(r.People.MachineClicked), Replies: analyticsCount(t.Replies),
			Bounces: analyticsCount(t.Bounces()), Unsubscribes: analyticsCount(t.Unsubscribes), OpenRate: api.NewOptFloat64(t.OpenRate()),
			ClickRate: api.NewOptFloat64(t.ClickRate()), ReplyRate: api.NewOptFloat64(t.ReplyRate()),
			BounceRate: api.NewOptFloat64(t.BounceRate())},
		Steps: make([]api.CampaignStepStats, len(r.Steps)),
		Engagement: api.CampaignEngagement{Countries: bucketsAPI(r.Countries), Clients: bucketsAPI(r.Clients),
			Devices: bucketsAPI(r.Devices)}}
	for i, s := range r.Steps {
		out.Steps[i] = api.CampaignStepStats{StepID: api.NewOptUUID(s.ID), Name: api.NewOptString(s.Name),
			Position: api.NewOptInt(s.Position), EmailsSent: analyticsCount(s.Sent), Opens: analyticsCount(s.Opens),
			MachineOpens: analyticsCount(s.MachineOpens), Clicks: analyticsCount(s.Clicks), MachineClicks: analyticsCount(s.MachineClicks),
			Replies: analyticsCount(s.Replies), Bounces: analyticsCount(s.Bounces()), OpenRate: api.NewOptFloat64(s.OpenRate()),
			ClickRate: api.NewOptFloat64(s.ClickRate()), ReplyRate: api.NewOptFloat64(s.ReplyRate()),
			BounceRate: api.NewOptFloat64(s.BounceRate())}
	}
	return out, nil
}

// AnalyticsCampaignDaily answers one point per day of the from..to range.
func (h *AnalyticsCampaigns) AnalyticsCampaignDaily(ctx context.Context, params api.AnalyticsCampaignDailyParams) (*api.CampaignDailyStats, error) {
	org, err := teamCaller(ctx, auth.ReadAnalytics, "READ_ANALYTICS", auth.ViewAnalytics)
	if err != nil {
		return nil, err
	}
	first, last, err := campaignstats.Range(params.From, params.To)
	if err != nil {
		return nil, err
	}
	var points []campaignstats.Point
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		points, err = campaignstats.Daily(ctx, tx, org, params.ID, first, last)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.CampaignDailyStats{Data: make([]api.CampaignDayPoint, len(points))}
	for i, p := range points {
		out.Data[i] = api.CampaignDayPoint{Date: api.NewOptDate(p.At), Sent: analyticsCount(p.Sent), Opens: analyticsCount(p.HumanOpens()),
			Clicks: analyticsCount(p.HumanClicks()), Replies: analyticsCount(p.Replies)}
	}
	return out, nil
}

// AnalyticsCampaignHourly answers the 24 hours of date (today, UTC, by default).
func (h *AnalyticsCampaigns) AnalyticsCampaignHourly(ctx context.Context, params api.AnalyticsCampaignHourlyParams) (*api.CampaignHourlyStats, error) {
	org, err := teamCaller(ctx, auth.ReadAnalytics, "READ_ANALYTICS", auth.ViewAnalytics)
	if err != nil {
		return nil, err
	}
	date := params.Date.Or(h.now().UTC())
	var points []campaignstats.Point
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		points, err = campaignstats.Hourly(ctx, tx, org, params.ID, date)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.CampaignHourlyStats{Data: make([]api.CampaignHourPoint, len(points))}
	for i, p := range points {
		out.Data[i] = api.CampaignHourPoint{Hour: api.NewOptInt(p.At.Hour()), Sent: analyticsCount(p.Sent), Opens: analyticsCount(p.HumanOpens()),
			Clicks: analyticsCount(p.HumanClicks()), Replies: analyticsCount(p.Replies)}
	}
	if len(points) > 0 {
		out.Date = points[0].At
	}
	return out, nil
}

// AnalyticsCampaignsCompare answers the named campaigns side by side over from..to.
func (h *AnalyticsCampaigns) AnalyticsCampaignsCompare(ctx context.Context, params api.AnalyticsCampaignsCompareParams) (*api.CampaignComparison, error) {
	org, err := teamCaller(ctx, auth.ReadAnalytics, "READ_ANALYTICS", auth.ViewAnalytics)
	if err != nil {
		return nil, err
	}
	ids, err := campaignstats.CompareIDs(params.Ids)
	if err != nil {
		return nil, err
	}
	first, last, err := campaignstats.Range(params.From, params.To)
	if err != nil {
		return nil, err
	}
	var rows []campaignstats.Compared
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err = campaignstats.Compare(ctx, tx, org, ids, first, last)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.CampaignComparison{Campaigns: make([]api.CampaignComparisonItem, len(rows)),
		Period: api.DateRange{From: api.NewOptDateTime(first), To: api.NewOptDateTime(last.AddDate(0, 0, 1))}}
	for i, r := range rows {
		out.Campaigns[i] = api.CampaignComparisonItem{CampaignID: api.NewOptUUID(r.ID), Name: api.NewOptString(r.Name),
			Status: api.NewOptString(r.Status), EmailsSent: analyticsCount(r.Sent), OpenRate: api.NewOptFloat64(r.OpenRate()),
			ClickRate: api.NewOptFloat64(r.ClickRate()), ReplyRate: api.NewOptFloat64(r.ReplyRate()),
			BounceRate: api.NewOptFloat64(r.BounceRate())}
	}
	return out, nil
}

// bucketsAPI maps engagement buckets to the API's.
func bucketsAPI(in []campaignstats.Bucket) []api.CampaignEngagementBucket {
	out := make([]api.CampaignEngagementBucket, len(in))
	for i, b := range in {
		out[i] = api.CampaignEngagementBucket{Key: b.Key, Opens: int(b.Opens), Clicks: int(b.Clicks)}
	}
	return out
}
