package campaignstats

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/analytics/engagement"
	"github.com/outflowhq/outflow/internal/analytics/metrics"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

var queries = dbq.New()

// Head is what a report says of the campaign itself.
type Head struct {
	ID              uuid.UUID
	Name, Status    string
	CreatedAt       time.Time
	TotalContacts   int64 // the campaign's leads
	PendingContacts int64 // leads still in the sequence (pending or active)
}

// Step is one campaign step with its counters summed over its A/B variants and every day.
type Step struct {
	ID       uuid.UUID
	Name     string
	Position int
	metrics.Counters
}

// Bucket is one key of an engagement dimension: distinct contacts who opened (a click counts as an open) and
// who clicked.
type Bucket struct {
	Key           string
	Opens, Clicks int64
}

// EngagementTop is how many keys of each dimension the report shows: the busiest, by opens then clicks.
const EngagementTop = 8

// People are the distinct contacts behind a campaign's opens and clicks (the seed's unique counts), from its
// leads: those with a send opened (by anyone), those whose sends were opened only by machines so far, and the
// same for clicks (a person's click counts once its effects applied). Opened minus MachineOpened are the
// people who opened.
type People struct {
	Opened, MachineOpened, Clicked, MachineClicked int64
}

// Report is one campaign's analytics.
type Report struct {
	Head
	// Totals are the campaign's counters over every day.
	Totals metrics.Counters
	// People are the distinct contacts behind Totals' opens and clicks.
	People People
	// Steps are every step of the campaign in order, sent or not.
	Steps []Step
	// Countries, Clients and Devices are the busiest EngagementTop keys of each dimension.
	Countries, Clients, Devices []Bucket
}

// NotFound is the answer for a campaign that is not the organization's.
func NotFound(id uuid.UUID) error {
	return apierror.NotFound("campaign_not_found", fmt.Sprintf("Campaign %s not found.", id))
}

// Get reads campaign id's report in tx.
func Get(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) (Report, error) {
	head, err := queries.AnalyticsCampaignHead(ctx, tx, dbq.AnalyticsCampaignHeadParams{OrganizationID: org, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return Report{}, NotFound(id)
	}
	if err != nil {
		return Report{}, err
	}
	r := Report{Head: Head{ID: head.ID, Name: head.Name, Status: head.Status, CreatedAt: head.CreatedAt,
		TotalContacts: head.TotalContacts, PendingContacts: head.PendingContacts},
		People: People{Opened: head.Opened, MachineOpened: head.MachineOpened, Clicked: head.Clicked,
			MachineClicked: head.MachineClicked}}
	t, err := queries.AnalyticsCampaignTotals(ctx, tx, dbq.AnalyticsCampaignTotalsParams{OrganizationID: org, CampaignID: id})
	if err != nil {
		return Report{}, err
	}
	r.Totals = metrics.Counters{Sent: t.Sent, Opens: t.Opens, MachineOpens: t.MachineOpens, Clicks: t.Clicks,
		MachineClicks: t.MachineClicks, Replies: t.Replies, BouncesHard: t.BouncesHard, BouncesSoft: t.BouncesSoft,
		Complaints: t.Complaints, Unsubscribes: t.Unsubscribes}
	steps, err := queries.AnalyticsCampaignSteps(ctx, tx, dbq.AnalyticsCampaignStepsParams{OrganizationID: org, CampaignID: id})
	if err != nil {
		return Report{}, err
	}
	r.Steps = make([]Step, len(steps))
	for i, s := range steps {
		r.Steps[i] = Step{ID: s.ID, Name: s.Name, Position: int(s.Position), Counters: metrics.Counters{Sent: s.Sent,
			Opens: s.Opens, MachineOpens: s.MachineOpens, Clicks: s.Clicks, MachineClicks: s.MachineClicks,
			Replies: s.Replies, BouncesHard: s.BouncesHard, BouncesSoft: s.BouncesSoft}}
	}
	rows, err := queries.AnalyticsCampaignEngagement(ctx, tx, dbq.AnalyticsCampaignEngagementParams{OrganizationID: org,
		CampaignID: id, RowLimit: EngagementTop})
	if err != nil {
		return Report{}, err
	}
	r.Countries, r.Clients, r.Devices = []Bucket{}, []Bucket{}, []Bucket{}
	for _, row := range rows {
		b := Bucket{Key: row.Key, Opens: row.Opens, Clicks: row.Clicks}
		switch row.Dimension {
		case engagement.DimensionCountry:
			r.Countries = append(r.Countries, b)
		case engagement.DimensionClient:
			r.Clients = append(r.Clients, b)
		case engagement.DimensionDevice:
			r.Devices = append(r.Devices, b)
		}
	}
	return r, nil
}

// Point is one day's or hour's counters of a campaign.
type Point struct {
	// At is the day (00:00 UTC) or the hour's start.
	At time.Time
	metrics.Counters
}

// MaxSpanDays is the longest range, in days counting both ends, a daily report or a comparison reads.
const MaxSpanDays = 366

// Range checks a from/to range of dates (both days included, UTC): to may not be before from, and the range
// may not be longer than MaxSpanDays.
func Range(from, to time.Time) (first, last time.Time, err error) {
	first, last = day(from), day(to)
	if last.Before(first) {
		return first, last, apierror.BadRequest("invalid_date_range", "to must not be before from.")
	}
	if span := int(last.Sub(first).Hours()/24) + 1; span > MaxSpanDays {
		return first, last, apierror.New(http.StatusBadRequest, "date_range_too_long",
			fmt.Sprintf("from and to span %d days; at most %d days can be read at once.", span, MaxSpanDays))
	}
	return first, last, nil
}

// day is t's UTC calendar day at 00:00 UTC (a date parameter decodes as midnight UTC already).
func day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Daily reads campaign id's days first..last (a checked Range), one point per day, zero where nothing
// happened.
func Daily(ctx context.Context, tx pgx.Tx, org, id uuid.UUID, first, last time.Time) ([]Point, error) {
	if err := exists(ctx, tx, org, id); err != nil {
		return nil, err
	}
	rows, err := queries.AnalyticsCampaignDays(ctx, tx, dbq.AnalyticsCampaignDaysParams{OrganizationID: org, CampaignID: id,
		First: first, Last: last})
	if err != nil {
		return nil, err
	}
	byDay := make(map[time.Time]metrics.Counters, len(rows))
	for _, r := range rows {
		byDay[day(r.Day)] = metrics.Counters{Sent: r.Sent, Opens: r.Opens, MachineOpens: r.MachineOpens, Clicks: r.Clicks,
			MachineClicks: r.MachineClicks, Replies: r.Replies}
	}
	var out []Point
	for d := first; !d.After(last); d = d.AddDate(0, 0, 1) {
		out = append(out, Point{At: d, Counters: byDay[d]})
	}
	return out, nil
}

// Hourly reads campaign id's 24 hours of the UTC day date, zero where nothing happened.
func Hourly(ctx context.Context, tx pgx.Tx, org, id uuid.UUID, date time.Time) ([]Point, error) {
	if err := exists(ctx, tx, org, id); err != nil {
		return nil, err
	}
	start := day(date)
	rows, err := queries.AnalyticsCampaignHours(ctx, tx, dbq.AnalyticsCampaignHoursParams{OrganizationID: org, CampaignID: id,
		Since: start, Until: start.Add(24 * time.Hour)})
	if err != nil {
		return nil, err
	}
	byHour := make(map[time.Time]metrics.Counters, len(rows))
	for _, r := range rows {
		byHour[r.Hour.UTC()] = metrics.Counters{Sent: r.Sent, Opens: r.Opens, MachineOpens: r.MachineOpens, Clicks: r.Clicks,
			MachineClicks: r.MachineClicks, Replies: r.Replies}
	}
	out := make([]Point, 24)
	for h := range out {
		at := start.Add(time.Duration(h) * time.Hour)
		out[h] = Point{At: at, Counters: byHour[at]}
	}
	return out, nil
}

// exists answers NotFound unless id is one of org's campaigns.
func exists(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) error {
	ok, err := queries.AnalyticsCampaignExists(ctx, tx, dbq.AnalyticsCampaignExistsParams{OrganizationID: org, ID: id})
	if err == nil && !ok {
		return NotFound(id)
	}
	return err
}
