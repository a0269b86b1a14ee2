package accounts

import (
	"context"
	"math"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/analytics/metrics"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/mail/sending"
	"github.com/outflowhq/outflow/internal/platform/db"
)

var queries = dbq.New()

// WarmupScoreDays is how many UTC days (today included) of a mailbox's warmup rollup its warmup score reads.
const WarmupScoreDays = 7

// Status is one mailbox's computed status.
type Status struct {
	Mailbox dbq.Mailbox
	Health  Health
	// Errors are the open entries of the mailbox's error log, newest first.
	Errors     []dbq.MailboxError
	Usage      Usage
	InCampaign bool
	// Warmup is set only when warmup was ever enabled: it is now, or the warmup rollup has days of it.
	Warmup *Warmup
	// WarmupHealth is set only while the mailbox is in a warmup pool (warmup enabled, paused or not).
	WarmupHealth *WarmupHealth
}

// Usage is today's sending against the mailbox's limits.
type Usage struct {
	// Date is the mailbox's own day (its time zone, UTC without one): the day its daily cap counts.
	Date time.Time
	// CampaignSent is what the cap's counter holds that day (campaign and direct sends, as the send
	// pipeline charges them), against CampaignLimit (campaign_limit).
	CampaignSent, CampaignLimit int
	// WarmupSent is today's (UTC) warmup sends from the rollup, against WarmupLimit (the ramp's target
	// today, 0 with warmup off).
	WarmupSent, WarmupLimit int
}

// Warmup is a mailbox's warmup standing.
type Warmup struct {
	Enabled, Paused bool
	// StartedAt is the ramp's anchor (moved forward by time spent paused); nil when warmup is off.
	StartedAt *time.Time
	// CurrentVolume is today's warmup sends, TargetVolume the ramp's target today, MaxVolume its ceiling.
	CurrentVolume, TargetVolume, MaxVolume int
	// ReplyRate is the configured share of warmup mail the pool answers (warmup_reply_rate, percent).
	ReplyRate float64
	// DaysActive is how many active warmup days the ramp has climbed (mailbox.Ramp.ActiveDays).
	DaysActive int
}

// WarmupHealth is the warmup network's verdict on the mailbox with the score of its recent warmup traffic.
type WarmupHealth struct {
	// State is the warmup network's verdict (mailboxes.warmup_health), what rotation and warmup follow.
	State string
	// Score is metrics.Score of the mailbox's warmup rollup over the last WarmupScoreDays UTC days.
	Score int
	// SpamScore is that traffic's spam placement rate (percent, rounded; 0 without seed samples).
	SpamScore int
	// EvaluatedAt is when the score was computed (the request's time).
	EvaluatedAt time.Time
}

// List computes the status of the organization's mailboxes, newest first; only, when not nil, limits them to
// those ids (a mailbox-scoped key's). It fails whole when any one status cannot be computed.
func List(ctx context.Context, tx pgx.Tx, org uuid.UUID, only []uuid.UUID, grace time.Duration, now time.Time) ([]Status, error) {
	return load(ctx, tx, dbq.AnalyticsMailboxStatesParams{OrganizationID: org, OnlyIds: only}, grace, now)
}

// Get computes one mailbox's status; an unknown id is a 404.
func Get(ctx context.Context, tx pgx.Tx, org, id uuid.UUID, grace time.Duration, now time.Time) (Status, error) {
	out, err := load(ctx, tx, dbq.AnalyticsMailboxStatesParams{OrganizationID: org, ID: uuid.NullUUID{UUID: id, Valid: true}}, grace, now)
	if err != nil {
		return Status{}, err
	}
	if len(out) == 0 {
		return Status{}, db.Classify(pgx.ErrNoRows, "Mailbox")
	}
	return out[0], nil
}

func load(ctx context.Context, tx pgx.Tx, args dbq.AnalyticsMailboxStatesParams, grace time.Duration, now time.Time) ([]Status, error) {
	org := args.OrganizationID
	rows, err := queries.AnalyticsMailboxStates(ctx, tx, args)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return []Status{}, nil
	}
	ids, days := make([]uuid.UUID, len(rows)), make([]time.Time, len(rows))
	for i, r := range rows {
		ids[i], days[i] = r.Mailbox.ID, sending.MailboxDay(now, r.Mailbox.Timezone)
	}
	openErrs, err := queries.AnalyticsMailboxOpenErrors(ctx, tx, dbq.AnalyticsMailboxOpenErrorsParams{OrganizationID: org, MailboxIds: ids})
	if err != nil {
		return nil, err
	}
	errsOf := map[uuid.UUID][]dbq.MailboxError{}
	for _, e := range openErrs {
		errsOf[e.MailboxID] = append(errsOf[e.MailboxID], e)
	}
	capped, err := queries.AnalyticsMailboxCappedToday(ctx, tx, dbq.AnalyticsMailboxCappedTodayParams{OrganizationID: org, MailboxIds: ids, Days: days})
	if err != nil {
		return nil, err
	}
	cappedOf := map[uuid.UUID]int{}
	for _, c := range capped {
		cappedOf[c.MailboxID] = int(c.Capped)
	}
	today := UTCDay(now)
	warm, err := queries.AnalyticsMailboxWarmup(ctx, tx, dbq.AnalyticsMailboxWarmupParams{OrganizationID: org, MailboxIds: ids,
		Today: today, Since: today.AddDate(0, 0, -(WarmupScoreDays - 1))})
	if err != nil {
		return nil, err
	}
	warmOf := map[uuid.UUID]dbq.AnalyticsMailboxWarmupRow{}
	for _, w := range warm {
		warmOf[w.MailboxID] = w
	}
	out := make([]Status, len(rows))
	for i, r := range rows {
		m := r.Mailbox
		errs := errsOf[m.ID]
		if errs == nil {
			errs = []dbq.MailboxError{}
		}
		h, err := HealthOf(Input{Mailbox: m, SyncError: r.SyncError, OpenErrors: errs}, grace, now)
		if err != nil {
			return nil, err
		}
		w, warmed := warmOf[m.ID]
		ramp := mailbox.RampOf(m)
		out[i] = Status{Mailbox: m, Health: h, Errors: errs, InCampaign: r.InCampaign,
			Usage: Usage{Date: days[i], CampaignSent: cappedOf[m.ID], CampaignLimit: int(m.CampaignLimit),
				WarmupSent: int(w.SentToday), WarmupLimit: ramp.DailyTarget(now)}}
		if m.Warmup != nil || warmed {
			out[i].Warmup = &Warmup{Enabled: m.Warmup != nil, Paused: m.WarmupPausedAt != nil, StartedAt: m.Warmup,
				CurrentVolume: int(w.SentToday), TargetVolume: ramp.DailyTarget(now), MaxVolume: int(m.WarmupMax),
				ReplyRate: float64(m.WarmupReplyRate), DaysActive: ramp.ActiveDays(now)}
		}
		if m.Warmup != nil {
			wh := warmupHealthOf(m, w, now)
			out[i].WarmupHealth = &wh
		}
	}
	return out, nil
}

// warmupHealthOf is the warmup verdict of m (HealthOf has checked it is a known state) with the score of its
// recent warmup rollup w.
func warmupHealthOf(m dbq.Mailbox, w dbq.AnalyticsMailboxWarmupRow, now time.Time) WarmupHealth {
	c := metrics.Counters{Sent: w.Sent, BouncesHard: w.BouncesHard, BouncesSoft: w.BouncesSoft, Complaints: w.Complaints,
		PlacementInbox: w.PlacementInbox, PlacementSpam: w.PlacementSpam}
	spam, _ := c.SpamPlacementRate()
	return WarmupHealth{State: m.WarmupHealth, Score: int(math.Round(c.Score())), SpamScore: int(math.Round(spam)), EvaluatedAt: now}
}

// UTCDay is the UTC calendar day of t as midnight UTC: how the rollups store days, so every report of the
// analytics area names a day the same way.
func UTCDay(t time.Time) time.Time {
	y, mo, d := t.UTC().Date()
	return time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)
}
