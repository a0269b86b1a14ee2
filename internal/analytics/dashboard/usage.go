package dashboard

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/analytics/accounts"
	"github.com/outflowhq/outflow/internal/platform/uuidv7"
)

// usagePeriods are the usage overview's periods and how many UTC days (today included) each covers;
// DefaultUsagePeriod is used for an absent or unknown one.
var usagePeriods = map[string]int{"day": 1, "week": 7, "month": 30}

// DefaultUsagePeriod is the usage period when the request names none or an unknown one.
const DefaultUsagePeriod = "day"

// Mailboxes counts mailboxes for the usage overview.
type Mailboxes struct {
	// Active have status active; InWarmup have warmup enabled and not paused; WithErrors have at least one
	// open (unresolved) entry in their error log.
	Total, Active, InWarmup, WithErrors int
}

// Usage is the usage overview.
type Usage struct {
	// Period is the period used (the default when the request's was absent or unknown).
	Period    string
	Mailboxes Mailboxes
	Campaigns dbq.AnalyticsCampaignCountsRow
	// EmailsSent are the kind campaign sends of the period's days (the rollup).
	EmailsSent int64
	// Contacts holds the contact totals and, as Added, the contacts created today since 00:00 UTC.
	Contacts dbq.AnalyticsContactCountsRow
}

// BuildUsage computes the usage overview of org at now over period (falling back to DefaultUsagePeriod);
// only and grace are as for Build.
func BuildUsage(ctx context.Context, tx pgx.Tx, org uuid.UUID, period string, only []uuid.UUID, grace time.Duration, now time.Time) (Usage, error) {
	days, ok := usagePeriods[period]
	if !ok {
		period, days = DefaultUsagePeriod, usagePeriods[DefaultUsagePeriod]
	}
	today := accounts.UTCDay(now)
	out := Usage{Period: period}
	_, sent, err := orgDays(ctx, tx, org, today.AddDate(0, 0, -(days-1)), today)
	if err != nil {
		return Usage{}, err
	}
	out.EmailsSent = sent.Sent
	if out.Campaigns, err = queries.AnalyticsCampaignCounts(ctx, tx, org); err != nil {
		return Usage{}, err
	}
	if out.Contacts, err = queries.AnalyticsContactCounts(ctx, tx, dbq.AnalyticsContactCountsParams{OrganizationID: org, SinceID: uuidv7.Floor(today)}); err != nil {
		return Usage{}, err
	}
	statuses, err := accounts.List(ctx, tx, org, only, grace, now)
	if err != nil {
		return Usage{}, err
	}
	out.Mailboxes.Total = len(statuses)
	for _, s := range statuses {
		m := s.Mailbox
		if m.Status == "active" {
			out.Mailboxes.Active++
		}
		if m.Warmup != nil && m.WarmupPausedAt == nil {
			out.Mailboxes.InWarmup++
		}
		if len(s.Errors) > 0 {
			out.Mailboxes.WithErrors++
		}
	}
	return out, nil
}
