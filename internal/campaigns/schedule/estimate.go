package schedule

import (
	"time"
)

// horizonDays is how far ahead an estimate projects: a campaign that would finish more than 730 days (two
// years) after its first day has no finish worth promising, so its sending_days and finish are null.
const horizonDays = 730

// MailboxDay is one sender mailbox's capacity facts for an estimate, as the send pipeline counts them.
type MailboxDay struct {
	// Cap is the mailbox's campaign_limit, the daily cap every campaign and direct send share.
	Cap int
	// SentToday is what the mailbox's counter for its own local day already holds toward Cap
	// (mailbox_send_days.capped): that much of today is gone whatever the campaign does.
	SentToday int
}

// EstimateInput is everything an estimate depends on; it holds no clock, so Now is part of it.
type EstimateInput struct {
	// Recipients is the number of distinct contacts in the audience.
	Recipients int
	// Mailboxes are the sendable mailboxes the campaign would send from.
	Mailboxes []MailboxDay
	// DailyLimit is the campaign's emails per mailbox per day; a mailbox sends min(DailyLimit, its Cap).
	DailyLimit int
	// Days are the sending weekdays (0 = none).
	Days Weekdays
	// Location is the campaign's time zone; nil means UTC.
	Location *time.Location
	// Start is the campaign's start_date; the zero time or a time before Now means Now.
	Start time.Time
	// Now is the current time.
	Now time.Time
}

// Projection is an estimate's answer, field for field the API's CampaignEstimate.
type Projection struct {
	// Recipients and Mailboxes echo the audience and sender counts the projection is built on.
	Recipients, Mailboxes int
	// DailyCapacity is what the mailboxes send on one full sending day: the sum of min(DailyLimit, Cap). It
	// does not depend on Days or on the audience.
	DailyCapacity int
	// RemainingToday is the capacity still open today: the sum of max(0, min(DailyLimit, Cap) - SentToday),
	// or 0 when today (in Location) is not a sending day or the campaign starts on a later date. It does not
	// depend on the audience.
	RemainingToday int
	// SendingDays is how many sending days the audience needs, today included when RemainingToday > 0.
	SendingDays *int
	// EstimatedFinishAt is 23:59:59 wall-clock time in Location on the last of those days.
	EstimatedFinishAt *time.Time
}

// Estimate projects how long a campaign takes to reach its audience once, one email per recipient, at full
// capacity on every sending day. The rules, in whole days (sending hours are not modelled):
//
//   - The first day is the date of max(Start, Now) in Location; "today" is Now's date there.
//   - Today sends RemainingToday (see Projection) when the first day is today; every later sending day from the
//     first day on sends DailyCapacity.
//   - SendingDays counts the days used: today when RemainingToday > 0 (and it is the only day when that
//     covers the audience), plus ceil((Recipients - RemainingToday) / DailyCapacity) full days.
//   - EstimatedFinishAt is the end of the last of them, 23:59:59 in Location, built with time.Date so a
//     daylight saving change moves the UTC instant and never the local hour.
//   - SendingDays and EstimatedFinishAt are nil for an empty audience, no capacity (no mailboxes, a daily limit
//     or caps of 0, or Days 0), or a last day more than 730 days (two years) after the first day.
func Estimate(in EstimateInput) Projection {
	loc := in.Location
	if loc == nil {
		loc = time.UTC
	}
	out := Projection{Recipients: in.Recipients, Mailboxes: len(in.Mailboxes)}
	today := dateOf(in.Now, loc)
	first := today
	if in.Start.After(in.Now) {
		first = dateOf(in.Start, loc)
	}
	sendsToday := first.Equal(today) && in.Days.Has(today.Weekday())
	for _, m := range in.Mailboxes {
		perDay := max(0, min(in.DailyLimit, m.Cap))
		out.DailyCapacity += perDay
		if sendsToday {
			out.RemainingToday += max(0, perDay-m.SentToday)
		}
	}
	if in.Recipients <= 0 || out.DailyCapacity == 0 || in.Days.perWeek() == 0 {
		return out
	}
	days, last := 0, today
	if out.RemainingToday > 0 {
		days = 1
	}
	if left := in.Recipients - out.RemainingToday; left > 0 {
		full := (left-1)/out.DailyCapacity + 1 // ceil without overflow
		from := first
		if first.Equal(today) {
			from = today.AddDate(0, 0, 1)
		}
		d, ok := nthSendingDay(from, in.Days, full, first.AddDate(0, 0, horizonDays))
		if !ok {
			return out
		}
		days, last = days+full, d
	}
	finish := time.Date(last.Year(), last.Month(), last.Day(), 23, 59, 59, 0, loc)
	out.SendingDays, out.EstimatedFinishAt = &days, &finish
	return out
}
