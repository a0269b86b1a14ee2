package posture

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/analytics/metrics"
)

// kindWarmup is the rollup kind of warmup exchange traffic, which deliverability leaves out (but for its seed
// placements).
const kindWarmup = "warmup"

// Deliverability is the organization's deliverability over a window: the counters a report shows and the
// rates, score and band metrics derives from them.
type Deliverability struct {
	// Window is the span of UTC days counted.
	Window Window
	// Totals are the campaign and direct counters, with the seed placements of every kind: Score and the
	// placement rates read them.
	Totals metrics.Counters
	// Days are Totals day by day (seed placements aside), one per day of the window.
	Days []Day
	// Mailboxes, Campaigns and Providers break the sends, bounces and complaints down, busiest first.
	Mailboxes []Mailbox
	Campaigns []Campaign
	Providers []Provider
	// WarmupPlacement are the seed placements observed on warmup traffic.
	WarmupPlacement metrics.Counters
	// Suppressed is how many suppression entries are in force now; DeadLetters how many webhook deliveries
	// were abandoned (attempts exhausted, or their endpoint disabled) and not redelivered since. Both are
	// current state, not counts over the window.
	Suppressed, DeadLetters int64
}

// EventsTotal is the sum of the recipient events the report counts: bounces (hard and soft), complaints,
// unsubscribes, replies, human opens and human clicks. Sends and reply intents are not events here (intents
// would count replies twice).
func (d Deliverability) EventsTotal() int64 {
	c := d.Totals
	return c.Bounces() + c.Complaints + c.Unsubscribes + c.Replies + c.HumanOpens() + c.HumanClicks()
}

// Day is one UTC day of a report.
type Day struct {
	Day time.Time
	metrics.Counters
}

// Mailbox is one sending mailbox's share (Email is empty once the mailbox is deleted). Its counters carry
// its sends, bounces and complaints and its seed placements, so its score is its own.
type Mailbox struct {
	ID    uuid.UUID
	Email string
	metrics.Counters
}

// Campaign is one campaign's share.
type Campaign struct {
	ID   uuid.UUID
	Name string
	metrics.Counters
}

// Provider is the share of the mailboxes of one provider (the provider they had when they sent).
type Provider struct {
	Name string
	metrics.Counters
}

// Report reads org's deliverability over w, in the caller's organization transaction; now dates the
// suppressions in force.
func Report(ctx context.Context, tx pgx.Tx, org uuid.UUID, w Window, now time.Time) (Deliverability, error) {
	q := dbq.New()
	out := Deliverability{Window: w}
	days, err := q.PostureOrgDays(ctx, tx, dbq.PostureOrgDaysParams{OrganizationID: org, FirstDay: w.First, LastDay: w.Last})
	if err != nil {
		return out, err
	}
	byDay := map[time.Time]metrics.Counters{}
	for _, r := range days {
		c := orgDayCounters(r)
		placement := metrics.Counters{PlacementInbox: c.PlacementInbox, PlacementSpam: c.PlacementSpam}
		out.Totals.Add(placement)
		if r.Kind == kindWarmup {
			out.WarmupPlacement.Add(placement)
			continue
		}
		c.PlacementInbox, c.PlacementSpam = 0, 0
		out.Totals.Add(c)
		day := byDay[utcDay(r.Day)]
		day.Add(c)
		byDay[utcDay(r.Day)] = day
	}
	for _, d := range w.Dates() {
		out.Days = append(out.Days, Day{Day: d, Counters: byDay[d]})
	}
	mailboxes, err := q.PostureMailboxes(ctx, tx, dbq.PostureMailboxesParams{OrganizationID: org, FirstDay: w.First, LastDay: w.Last})
	if err != nil {
		return out, err
	}
	out.Mailboxes, out.Providers = breakdowns(mailboxes)
	campaigns, err := q.PostureCampaigns(ctx, tx, dbq.PostureCampaignsParams{OrganizationID: org, FirstDay: w.First, LastDay: w.Last})
	if err != nil {
		return out, err
	}
	for _, r := range campaigns {
		out.Campaigns = append(out.Campaigns, Campaign{ID: r.CampaignID, Name: r.Name, Counters: metrics.Counters{
			Sent: r.Sent, BouncesHard: r.BouncesHard, BouncesSoft: r.BouncesSoft, Complaints: r.Complaints}})
	}
	slices.SortFunc(out.Campaigns, func(a, b Campaign) int {
		return cmp.Or(cmp.Compare(b.Sent, a.Sent), cmp.Compare(a.Name, b.Name), slices.Compare(a.ID[:], b.ID[:]))
	})
	current, err := q.PostureCurrent(ctx, tx, dbq.PostureCurrentParams{OrganizationID: org, Now: now})
	if err != nil {
		return out, err
	}
	out.Suppressed, out.DeadLetters = current.Suppressed, current.DeadLetters
	return out, nil
}

// breakdowns folds the per mailbox and provider rows into the mailbox and the provider breakdowns, busiest
// first.
func breakdowns(rows []dbq.PostureMailboxesRow) ([]Mailbox, []Provider) {
	var mailboxes []Mailbox
	var providers []Provider
	seen, providerAt := map[uuid.UUID]int{}, map[string]int{}
	for _, r := range rows {
		c := metrics.Counters{Sent: r.Sent, BouncesHard: r.BouncesHard, BouncesSoft: r.BouncesSoft, Complaints: r.Complaints,
			PlacementInbox: r.PlacementInbox, PlacementSpam: r.PlacementSpam}
		i, ok := seen[r.MailboxID]
		if !ok {
			i, seen[r.MailboxID] = len(mailboxes), len(mailboxes)
			mailboxes = append(mailboxes, Mailbox{ID: r.MailboxID, Email: r.Email})
		}
		mailboxes[i].Add(c)
		j, ok := providerAt[r.Provider]
		if !ok {
			j, providerAt[r.Provider] = len(providers), len(providers)
			providers = append(providers, Provider{Name: r.Provider})
		}
		providers[j].Add(c)
	}
	slices.SortFunc(mailboxes, func(a, b Mailbox) int {
		return cmp.Or(cmp.Compare(b.Sent, a.Sent), cmp.Compare(a.Email, b.Email), slices.Compare(a.ID[:], b.ID[:]))
	})
	slices.SortFunc(providers, func(a, b Provider) int { return cmp.Or(cmp.Compare(b.Sent, a.Sent), cmp.Compare(a.Name, b.Name)) })
	return mailboxes, providers
}

// orgDayCounters reads one organization day row.
func orgDayCounters(r dbq.PostureOrgDaysRow) metrics.Counters {
	return metrics.Counters{
		Sent: r.Sent, Opens: r.Opens, MachineOpens: r.MachineOpens, Clicks: r.Clicks, MachineClicks: r.MachineClicks,
		Replies: r.Replies, IntentPositive: r.IntentPositive, IntentNegative: r.IntentNegative, IntentQuestion: r.IntentQuestion,
		IntentNeutral: r.IntentNeutral, IntentOutOfOffice: r.IntentOutOfOffice, IntentAutomated: r.IntentAutomated,
		BouncesHard: r.BouncesHard, BouncesSoft: r.BouncesSoft, Complaints: r.Complaints, Unsubscribes: r.Unsubscribes,
		PlacementInbox: r.PlacementInbox, PlacementSpam: r.PlacementSpam,
	}
}
