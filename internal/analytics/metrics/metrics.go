package metrics

import "math"

// Counters are one rollup row's counts (the analytics_* tables' columns; migrations/00040_analytics.sql says
// what each counts). Sums of rows are Counters too.
type Counters struct {
	Sent                                                          int64
	Opens, MachineOpens, Clicks, MachineClicks                    int64
	Replies                                                       int64
	IntentPositive, IntentNegative, IntentQuestion, IntentNeutral int64
	IntentOutOfOffice, IntentAutomated                            int64
	BouncesHard, BouncesSoft, Complaints, Unsubscribes            int64
	PlacementInbox, PlacementSpam                                 int64
}

// Add sums o into c.
func (c *Counters) Add(o Counters) {
	c.Sent += o.Sent
	c.Opens += o.Opens
	c.MachineOpens += o.MachineOpens
	c.Clicks += o.Clicks
	c.MachineClicks += o.MachineClicks
	c.Replies += o.Replies
	c.IntentPositive += o.IntentPositive
	c.IntentNegative += o.IntentNegative
	c.IntentQuestion += o.IntentQuestion
	c.IntentNeutral += o.IntentNeutral
	c.IntentOutOfOffice += o.IntentOutOfOffice
	c.IntentAutomated += o.IntentAutomated
	c.BouncesHard += o.BouncesHard
	c.BouncesSoft += o.BouncesSoft
	c.Complaints += o.Complaints
	c.Unsubscribes += o.Unsubscribes
	c.PlacementInbox += o.PlacementInbox
	c.PlacementSpam += o.PlacementSpam
}

// Bounces are hard and soft bounces together.
func (c Counters) Bounces() int64 { return c.BouncesHard + c.BouncesSoft }

// Delivered is what the providers kept: sends minus bounces, never below 0.
func (c Counters) Delivered() int64 { return max(c.Sent-c.Bounces(), 0) }

// HumanOpens are sends opened by a person: Opens minus MachineOpens.
func (c Counters) HumanOpens() int64 { return max(c.Opens-c.MachineOpens, 0) }

// HumanClicks are sends clicked by a person: Clicks minus MachineClicks.
func (c Counters) HumanClicks() int64 { return max(c.Clicks-c.MachineClicks, 0) }

// Intents are the classified replies, one per message (not additive with Replies, which counts sends answered).
func (c Counters) Intents() int64 {
	return c.IntentPositive + c.IntentNegative + c.IntentQuestion + c.IntentNeutral + c.IntentOutOfOffice + c.IntentAutomated
}

// PlacementSamples are the seed placements observed (inbox plus spam).
func (c Counters) PlacementSamples() int64 { return c.PlacementInbox + c.PlacementSpam }

// Percent is part of whole as a percentage rounded to two decimals, 0 while whole is 0.
func Percent(part, whole int64) float64 {
	if whole <= 0 {
		return 0
	}
	return math.Round(float64(part)*10000/float64(whole)) / 100
}

// OpenRate is human opens over sends.
func (c Counters) OpenRate() float64 { return Percent(c.HumanOpens(), c.Sent) }

// ClickRate is human clicks over sends.
func (c Counters) ClickRate() float64 { return Percent(c.HumanClicks(), c.Sent) }

// ReplyRate is sends answered over sends.
func (c Counters) ReplyRate() float64 { return Percent(c.Replies, c.Sent) }

// BounceRate is bounces (hard and soft) over sends.
func (c Counters) BounceRate() float64 { return Percent(c.Bounces(), c.Sent) }

// ComplaintRate is spam complaints over sends.
func (c Counters) ComplaintRate() float64 { return Percent(c.Complaints, c.Sent) }

// UnsubscribeRate is unsubscribes over sends.
func (c Counters) UnsubscribeRate() float64 { return Percent(c.Unsubscribes, c.Sent) }

// InboxPlacementRate is seed placements in the inbox over all seed placements; ok is false without samples
// (the reports then leave the placement rates out).
func (c Counters) InboxPlacementRate() (rate float64, ok bool) {
	return Percent(c.PlacementInbox, c.PlacementSamples()), c.PlacementSamples() > 0
}

// SpamPlacementRate is seed placements in spam over all seed placements; ok is false without samples.
func (c Counters) SpamPlacementRate() (rate float64, ok bool) {
	return Percent(c.PlacementSpam, c.PlacementSamples()), c.PlacementSamples() > 0
}

// The score's penalties: each grows linearly with its rate and saturates at its cap.
const (
	BouncePenaltyMax    = 40.0 // points, reached at BounceRateFull
	BounceRateFull      = 10.0 // percent
	ComplaintPenaltyMax = 30.0 // points, reached at ComplaintRateFull
	ComplaintRateFull   = 0.30 // percent
	SpamPenaltyMax      = 40.0 // points, reached at SpamPlacementFull
	SpamPlacementFull   = 40.0 // percent
)

// Score is 100 minus the saturating penalties of c's bounce rate, complaint rate and, when there are seed
// samples, spam placement rate; rounded to two decimals and never below 0.
func (c Counters) Score() float64 {
	s := 100 - penalty(c.BounceRate(), BounceRateFull, BouncePenaltyMax) - penalty(c.ComplaintRate(), ComplaintRateFull, ComplaintPenaltyMax)
	if spam, ok := c.SpamPlacementRate(); ok {
		s -= penalty(spam, SpamPlacementFull, SpamPenaltyMax)
	}
	return math.Round(max(s, 0)*100) / 100
}

func penalty(rate, full, most float64) float64 { return min(rate/full, 1) * most }

// The bands a score falls in, best first, and the lowest score of each (blocked is below BandQuarantined).
const (
	BandHealthy     = "healthy"
	BandWatch       = "watch"
	BandThrottled   = "throttled"
	BandQuarantined = "quarantined"
	BandBlocked     = "blocked"

	HealthyFrom     = 90.0
	WatchFrom       = 75.0
	ThrottledFrom   = 50.0
	QuarantinedFrom = 25.0
)

// Band names the band of score: healthy from 90, watch from 75, throttled from 50, quarantined from 25,
// blocked below.
func Band(score float64) string {
	switch {
	case score >= HealthyFrom:
		return BandHealthy
	case score >= WatchFrom:
		return BandWatch
	case score >= ThrottledFrom:
		return BandThrottled
	case score >= QuarantinedFrom:
		return BandQuarantined
	}
	return BandBlocked
}
