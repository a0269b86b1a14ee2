package handlers

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/analytics/posture"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// AnalyticsWarmup reports the warmup exchange's sends, replies and planned targets from `from` to `to`. An
// email_id that is not a valid id is ignored (the report is then unfiltered, as the contract says); a
// mailbox-scoped key's report covers its own mailboxes only, and naming another answers 404 (the route's
// check, repeated by posture).
func (h *PostureReports) AnalyticsWarmup(ctx context.Context, params api.AnalyticsWarmupParams) (*api.WarmupAnalytics, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	w, err := posture.DateWindow(params.From, params.To)
	if err != nil {
		return nil, err
	}
	q := posture.WarmupQuery{Window: w, Allowed: auth.PrincipalFrom(ctx).AllowedMailboxes}
	if s, ok := params.EmailID.Get(); ok {
		if id, err := uuid.Parse(s); err == nil {
			q.Mailbox = id
		}
	}
	var r posture.Warmup
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		r, err = posture.WarmupReport(ctx, tx, org, q)
		return err
	})
	if err != nil {
		return nil, err
	}
	return warmupOf(r), nil
}

// warmupOf maps a warmup report onto the contract.
func warmupOf(r posture.Warmup) *api.WarmupAnalytics {
	out := &api.WarmupAnalytics{
		EmailAccountID: r.Mailbox,
		DateRange:      api.DateRange{From: api.NewOptDateTime(r.Window.First), To: api.NewOptDateTime(r.Window.End())},
		Summary: api.WarmupSummary{TotalSent: analyticsCount(r.TotalSent), TotalReplied: analyticsCount(r.TotalReplied),
			AverageDaily: api.NewOptFloat64(r.AverageDaily()), ReplyRate: api.NewOptFloat64(r.ReplyRate()),
			TargetProgress: api.NewOptFloat64(r.TargetProgress()), DaysActive: api.NewOptInt(r.DaysActive)},
		DailyStats: make([]api.WarmupDayPoint, len(r.Days)),
	}
	if r.Mailbox != uuid.Nil {
		out.Email = api.NewOptString(r.Email)
	}
	for i, d := range r.Days {
		out.DailyStats[i] = api.WarmupDayPoint{Date: api.NewOptDate(d.Day), EmailsSent: analyticsCount(d.Sent),
			EmailsReplied: analyticsCount(d.Replied), TargetVolume: analyticsCount(d.Target)}
	}
	return out
}
