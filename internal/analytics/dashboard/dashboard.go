package dashboard

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/analytics/accounts"
	"github.com/outflowhq/outflow/internal/analytics/metrics"
)

var queries = dbq.New()

// How many entries the dashboard's lists hold.
const (
	TopCampaigns   = 5
	RecentActivity = 10
)

// kindCampaign is the rollup kind of email steps: the dashboard's totals count it alone.
const kindCampaign = "campaign"

// dashboardPeriods are the dashboard's periods and their length in days; DefaultDashboardPeriod is used for
// an absent or unknown one.
var dashboardPeriods = map[string]int{"7d": 7, "30d": 30, "90d": 90}

// DefaultDashboardPeriod is the dashboard's period when the request names none or an unknown one.
const DefaultDashboardPeriod = "7d"

// Day is one UTC day's counters.
type Day struct {
	Date time.Time
	metrics.Counters
}

// Campaign is one top campaign with its counters summed over the period.
type Campaign struct {
	ID           uuid.UUID
	Name, Status string
	metrics.Counters
}

// Buckets are the mailboxes by health level; each mailbox counts in exactly one.
type Buckets struct {
	Total, Healthy, Warning, Error int
}

// Dashboard is the dashboard report.
type Dashboard struct {
	// Period is the period used (the default when the request's was absent or unknown).
	Period string
	// Totals are the counters of kind campaign summed over the period.
	Totals          metrics.Counters
	ActiveCampaigns int
	ActiveAccounts  int
	Recent          []dbq.AnalyticsRecentActivityRow
	Top             []Campaign
	Health          Buckets
	// Trend has one entry per day of the period, oldest first.
	Trend []Day
}

// Build computes the dashboard of org at now over period (falling back to DefaultDashboardPeriod); only, when
// not nil, limits the mailbox numbers to those mailboxes, and grace is the domain-auth grace the health rules
// use.
func Build(ctx context.Context, tx pgx.Tx, org uuid.UUID, period string, only []uuid.UUID, grace time.Duration, now time.Time) (Dashboard, error) {
	days, ok := dashboardPeriods[period]
	if !ok {
		period, days = DefaultDashboardPeriod, dashboardPeriods[DefaultDashboardPeriod]
	}
	to := accounts.UTCDay(now)
	from := to.AddDate(0, 0, -(days - 1))
	out := Dashboard{Period: period}
	var err error
	if out.Trend, out.Totals, err = orgDays(ctx, tx, org, from, to); err != nil {
		return Dashboard{}, err
	}
	top, err := queries.AnalyticsTopCampaigns(ctx, tx, dbq.AnalyticsTopCampaignsParams{OrganizationID: org, FromDay: from, ToDay: to, RowLimit: TopCampaigns})
	if err != nil {
		return Dashboard{}, err
	}
	out.Top = make([]Campaign, len(top))
	for i, c := range top {
		out.Top[i] = Campaign{ID: c.CampaignID, Name: c.Name, Status: c.Status, Counters: metrics.Counters{Sent: c.Sent, Opens: c.Opens,
			MachineOpens: c.MachineOpens, Clicks: c.Clicks, MachineClicks: c.MachineClicks, Replies: c.Replies}}
	}
	if out.Recent, err = queries.AnalyticsRecentActivity(ctx, tx, dbq.AnalyticsRecentActivityParams{OrganizationID: org, RowLimit: RecentActivity}); err != nil {
		return Dashboard{}, err
	}
	campaigns, err := queries.AnalyticsCampaignCounts(ctx, tx, org)
	if err != nil {
		return Dashboard{}, err
	}
	out.ActiveCampaigns = int(campaigns.Active)
	statuses, err := accounts.List(ctx, tx, org, only, grace, now)
	if err != nil {
		return Dashboard{}, err
	}
	out.Health.Total = len(statuses)
	for _, s := range statuses {
		if s.Mailbox.Status == "active" {
			out.ActiveAccounts++
		}
		switch s.Health.Status {
		case accounts.Healthy:
			out.Health.Healthy++
		case accounts.Warning:
			out.Health.Warning++
		default:
			out.Health.Error++
		}
	}
	return out, nil
}

// orgDays reads the kind campaign rollup from..to (UTC days, both included): one Day per calendar day, zeros
// where no row exists, and their sum.
func orgDays(ctx context.Context, tx pgx.Tx, org uuid.UUID, from, to time.Time) ([]Day, metrics.Counters, error) {
	rows, err := queries.AnalyticsOrgDays(ctx, tx, dbq.AnalyticsOrgDaysParams{OrganizationID: org, Kind: kindCampaign, FromDay: from, ToDay: to})
	if err != nil {
		return nil, metrics.Counters{}, err
	}
	byDay := make(map[time.Time]metrics.Counters, len(rows))
	for _, r := range rows {
		byDay[accounts.UTCDay(r.Day)] = countersOf(r)
	}
	var days []Day
	var total metrics.Counters
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		c := byDay[d]
		total.Add(c)
		days = append(days, Day{Date: d, Counters: c})
	}
	return days, total, nil
}

func countersOf(r dbq.AnalyticsOrgDaysRow) metrics.Counters {
	return metrics.Counters{Sent: r.Sent, Opens: r.Opens, MachineOpens: r.MachineOpens, Clicks: r.Clicks, MachineClicks: r.MachineClicks,
		Replies: r.Replies, IntentPositive: r.IntentPositive, IntentNegative: r.IntentNegative, IntentQuestion: r.IntentQuestion,
		IntentNeutral: r.IntentNeutral, IntentOutOfOffice: r.IntentOutOfOffice, IntentAutomated: r.IntentAutomated,
		BouncesHard: r.BouncesHard, BouncesSoft: r.BouncesSoft, Complaints: r.Complaints, Unsubscribes: r.Unsubscribes,
		PlacementInbox: r.PlacementInbox, PlacementSpam: r.PlacementSpam}
}
