package posture

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/analytics/metrics"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// errMailboxNotFound answers a warmup report narrowed to a mailbox the organization does not have, or that a
// mailbox-scoped caller may not use: the same 404 either way, so the caller learns nothing of others.
var errMailboxNotFound = apierror.NotFound("mailbox_not_found", "Mailbox not found.")

// WarmupQuery is what a warmup report covers.
type WarmupQuery struct {
	Window Window
	// Mailbox narrows the report to one mailbox; uuid.Nil covers every mailbox the caller may see.
	Mailbox uuid.UUID
	// Allowed is a mailbox-scoped caller's list (nil: every mailbox of the organization). The report never
	// covers a mailbox outside it.
	Allowed []uuid.UUID
}

// Warmup is the warmup exchange's work over a window: per day, the warmup sends, the replies to them and
// the target volume the mailboxes' ramps planned.
type Warmup struct {
	// Mailbox and Email name the mailbox reported on; uuid.Nil and "" when the report covers several.
	Mailbox uuid.UUID
	Email   string
	Window  Window
	// Days has one entry per day of the window.
	Days []WarmupDay
	// TotalSent, TotalReplied and TotalTarget sum Days; DaysActive counts the days with a warmup send.
	TotalSent, TotalReplied, TotalTarget int64
	DaysActive                           int
}

// WarmupDay is one UTC day of a warmup report.
type WarmupDay struct {
	Day                   time.Time
	Sent, Replied, Target int64
}

// AverageDaily is the warmup sends per active day (a day with a warmup send), two decimals; 0 with none.
func (w Warmup) AverageDaily() float64 {
	if w.DaysActive == 0 {
		return 0
	}
	return math.Round(float64(w.TotalSent)*100/float64(w.DaysActive)) / 100
}

// ReplyRate is metrics' reply rate of the warmup sends: warmup sends answered over warmup sends.
func (w Warmup) ReplyRate() float64 {
	return metrics.Counters{Sent: w.TotalSent, Replies: w.TotalReplied}.ReplyRate()
}

// TargetProgress is the warmup sends over the planned target volume, in percent (above 100 when the
// mailboxes sent more than planned; 0 with no target).
func (w Warmup) TargetProgress() float64 { return metrics.Percent(w.TotalSent, w.TotalTarget) }

// WarmupReport reads the warmup report q asks for, in the caller's organization transaction.
func WarmupReport(ctx context.Context, tx pgx.Tx, org uuid.UUID, q WarmupQuery) (Warmup, error) {
	out := Warmup{Window: q.Window}
	only := q.Allowed
	if q.Mailbox != uuid.Nil {
		if q.Allowed != nil && !slices.Contains(q.Allowed, q.Mailbox) {
			return out, errMailboxNotFound
		}
		only = []uuid.UUID{q.Mailbox}
	}
	queries := dbq.New()
	mailboxes, err := queries.PostureWarmupMailboxes(ctx, tx, dbq.PostureWarmupMailboxesParams{OrganizationID: org, OnlyIds: only})
	if err != nil {
		return out, err
	}
	if q.Mailbox != uuid.Nil {
		if len(mailboxes) == 0 {
			return out, errMailboxNotFound
		}
		out.Mailbox, out.Email = q.Mailbox, mailboxes[0].Email
	}
	rows, err := queries.PostureWarmupDays(ctx, tx, dbq.PostureWarmupDaysParams{OrganizationID: org, FirstDay: q.Window.First,
		LastDay: q.Window.Last, OnlyIds: only})
	if err != nil {
		return out, err
	}
	done := map[time.Time]dbq.PostureWarmupDaysRow{}
	for _, r := range rows {
		done[utcDay(r.Day)] = r
	}
	ramps := make([]mailbox.Ramp, len(mailboxes))
	for i, m := range mailboxes {
		ramps[i] = mailbox.RampOf(m)
	}
	for _, d := range q.Window.Dates() {
		day := WarmupDay{Day: d, Sent: done[d].Sent, Replied: done[d].Replies}
		for _, r := range ramps {
			day.Target += int64(plannedTarget(r, d))
		}
		out.Days = append(out.Days, day)
		out.TotalSent += day.Sent
		out.TotalReplied += day.Replied
		out.TotalTarget += day.Target
		if day.Sent > 0 {
			out.DaysActive++
		}
	}
	return out, nil
}

// plannedTarget is the volume r plans for the UTC day starting at day: the ramp's daily target as the day
// ends (the day warmup starts is day one, at the base volume); 0 when warmup is off, had not started by the
// day's end, or was paused before the day began.
func plannedTarget(r mailbox.Ramp, day time.Time) int {
	end := day.AddDate(0, 0, 1)
	if r.Anchor.IsZero() || !r.Anchor.Before(end) || (!r.PausedAt.IsZero() && !r.PausedAt.After(day)) {
		return 0
	}
	return r.DailyTarget(end.Add(-time.Nanosecond))
}
