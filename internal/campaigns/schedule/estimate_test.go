package schedule_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/campaigns/schedule"
)

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}

func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	require.NoError(t, err)
	return v
}

// mailboxes is n mailboxes with campaign_limit limit that have sent nothing today.
func mailboxes(n, limit int) []schedule.MailboxDay {
	out := make([]schedule.MailboxDay, n)
	for i := range out {
		out[i] = schedule.MailboxDay{Cap: limit}
	}
	return out
}

// Calendar used below: 2026-01-05 is a Monday, so Jan 6 Tue, 8 Thu, 9 Fri, 10 Sat, 12 Mon, 19 Mon. US daylight
// saving starts Sunday 2026-03-08 and ends Sunday 2026-11-01; the EU's starts Sunday 2026-03-29 and ends Sunday
// 2026-10-25. Days 31 is Monday to Friday, 1 Monday only, 127 every day.
func TestEstimateMatchesHandComputations(t *testing.T) {
	t.Parallel()
	type want struct {
		capacity, remaining int
		days                int // 0: null
		finish              string
		localHour           int // the finish's hour in the zone (23 whenever there is a finish)
	}
	cases := []struct {
		name string
		zone string
		in   schedule.EstimateInput
		want want
	}{
		{
			// 2 mailboxes x min(50, 50) = 100 a day, all of it open today (Thursday). 450 recipients: 100
			// today, 350 left = ceil(350/100) = 4 full days: Fri 9, (weekend skipped) Mon 12, Tue 13, Wed 14.
			// 1 + 4 = 5 sending days, finish Wed Jan 14 23:59:59 UTC.
			name: "weekdays across a weekend", zone: "UTC",
			in: schedule.EstimateInput{Recipients: 450, Mailboxes: mailboxes(2, 50), DailyLimit: 50, Days: 31,
				Now: at(t, "2026-01-08T10:00:00Z")},
			want: want{capacity: 100, remaining: 100, days: 5, finish: "2026-01-14T23:59:59Z", localHour: 23},
		},
		{
			// Daily limit 40. Per mailbox min(40, cap) and what is left of it today (Tuesday):
			// cap 50 sent 20 -> 40, 20 left; cap 30 sent 30 -> 30, 0 left; cap 100 sent 10 -> 40, 30 left;
			// cap 20 sent 35 (the cap was lowered after sending) -> 20, max(0, 20-35) = 0 left.
			// Capacity 40+30+40+20 = 130, remaining 20+0+30+0 = 50. 300 recipients: 50 today, 250 left =
			// ceil(250/130) = 2 full days: Wed 7, Thu 8. 3 sending days, finish Thu Jan 8.
			name: "remaining today partially used", zone: "UTC",
			in: schedule.EstimateInput{Recipients: 300, DailyLimit: 40, Days: 31, Now: at(t, "2026-01-06T15:00:00Z"),
				Mailboxes: []schedule.MailboxDay{{Cap: 50, SentToday: 20}, {Cap: 30, SentToday: 30}, {Cap: 100, SentToday: 10}, {Cap: 20, SentToday: 35}}},
			want: want{capacity: 130, remaining: 50, days: 3, finish: "2026-01-08T23:59:59Z", localHour: 23},
		},
		{
			// Every mailbox used up today: nothing left today, so today does not count. 100 recipients at 100 a
			// day = 1 full day, tomorrow (Wed 7).
			name: "today used up", zone: "UTC",
			in: schedule.EstimateInput{Recipients: 100, DailyLimit: 50, Days: 31, Now: at(t, "2026-01-06T15:00:00Z"),
				Mailboxes: []schedule.MailboxDay{{Cap: 50, SentToday: 50}, {Cap: 50, SentToday: 60}}},
			want: want{capacity: 100, remaining: 0, days: 1, finish: "2026-01-07T23:59:59Z", localHour: 23},
		},
		{
			// Capacity 100, 100 open today, 80 recipients: today alone covers them, 1 day, finish today.
			name: "today covers the audience", zone: "UTC",
			in:   schedule.EstimateInput{Recipients: 80, Mailboxes: mailboxes(2, 50), DailyLimit: 50, Days: 31, Now: at(t, "2026-01-06T15:00:00Z")},
			want: want{capacity: 100, remaining: 100, days: 1, finish: "2026-01-06T23:59:59Z", localHour: 23},
		},
		{
			// Starts Monday Jan 19, later than today (Tue Jan 6): nothing goes out today whatever is open (the
			// 10 already sent do not matter). 120 recipients at 50 a day = ceil(120/50) = 3 days from the start:
			// Mon 19, Tue 20, Wed 21.
			name: "start date in the future", zone: "UTC",
			in: schedule.EstimateInput{Recipients: 120, Mailboxes: []schedule.MailboxDay{{Cap: 50, SentToday: 10}}, DailyLimit: 50, Days: 31,
				Now: at(t, "2026-01-06T09:00:00Z"), Start: at(t, "2026-01-19T08:00:00Z")},
			want: want{capacity: 50, remaining: 0, days: 3, finish: "2026-01-21T23:59:59Z", localHour: 23},
		},
		{
			// Starts at 03:00 UTC on Mon Jan 19, which is Sun Jan 18 22:00 in New York: the first day is that
			// Sunday (not a sending day), so the 2 days needed (ceil(60/50)) are Mon 19 and Tue 20; the finish is
			// Tue 23:59:59 EST (UTC-5) = Wed 04:59:59 UTC.
			name: "start date read in the zone", zone: "America/New_York",
			in: schedule.EstimateInput{Recipients: 60, Mailboxes: mailboxes(1, 50), DailyLimit: 50, Days: 31,
				Now: at(t, "2026-01-06T15:00:00Z"), Start: at(t, "2026-01-19T03:00:00Z")},
			want: want{capacity: 50, remaining: 0, days: 2, finish: "2026-01-21T04:59:59Z", localHour: 23},
		},
		{
			// A start in the past means now: today (Tuesday) contributes its 50, the other 10 go Wednesday.
			name: "start date in the past", zone: "UTC",
			in: schedule.EstimateInput{Recipients: 60, Mailboxes: mailboxes(1, 50), DailyLimit: 50, Days: 31,
				Now: at(t, "2026-01-06T15:00:00Z"), Start: at(t, "2025-12-01T00:00:00Z")},
			want: want{capacity: 50, remaining: 50, days: 2, finish: "2026-01-07T23:59:59Z", localHour: 23},
		},
		{
			// No sending day: the capacity of a sending day is still 50, but nothing is open today and the
			// audience is never reached.
			name: "days 0", zone: "UTC",
			in:   schedule.EstimateInput{Recipients: 10, Mailboxes: mailboxes(1, 50), DailyLimit: 50, Days: 0, Now: at(t, "2026-01-06T15:00:00Z")},
			want: want{capacity: 50, remaining: 0},
		},
		{
			// Nobody to send to: the capacity is reported, the timeline is null.
			name: "empty audience", zone: "UTC",
			in:   schedule.EstimateInput{Recipients: 0, Mailboxes: mailboxes(3, 50), DailyLimit: 50, Days: 31, Now: at(t, "2026-01-06T15:00:00Z")},
			want: want{capacity: 150, remaining: 150},
		},
		{
			name: "no mailboxes", zone: "UTC",
			in:   schedule.EstimateInput{Recipients: 10, DailyLimit: 50, Days: 31, Now: at(t, "2026-01-06T15:00:00Z")},
			want: want{},
		},
		{
			// min(0, 50) = 0 per mailbox.
			name: "daily limit 0", zone: "UTC",
			in:   schedule.EstimateInput{Recipients: 10, Mailboxes: mailboxes(2, 50), DailyLimit: 0, Days: 31, Now: at(t, "2026-01-06T15:00:00Z")},
			want: want{},
		},
		{
			// 1 a day on Mondays only, from Mon 2026-01-05 (today, 1 open): 105 recipients = today + 104 more
			// Mondays; the 104th after today is Jan 5 2026 + 104*7 = 728 days = Mon 2028-01-03, within the 730
			// days (2028-01-05) of the horizon.
			name: "two years exactly fits", zone: "UTC",
			in:   schedule.EstimateInput{Recipients: 105, Mailboxes: mailboxes(1, 50), DailyLimit: 1, Days: 1, Now: at(t, "2026-01-05T09:00:00Z")},
			want: want{capacity: 1, remaining: 1, days: 105, finish: "2028-01-03T23:59:59Z", localHour: 23},
		},
		{
			// One more recipient needs Mon 2028-01-10, 735 days after the first day: past two years, null.
			name: "over two years", zone: "UTC",
			in:   schedule.EstimateInput{Recipients: 106, Mailboxes: mailboxes(1, 50), DailyLimit: 1, Days: 1, Now: at(t, "2026-01-05T09:00:00Z")},
			want: want{capacity: 1, remaining: 1},
		},
		{
			// A billion recipients at 1 a day: answered without walking the days.
			name: "far beyond two years", zone: "UTC",
			in:   schedule.EstimateInput{Recipients: 1_000_000_000, Mailboxes: mailboxes(1, 50), DailyLimit: 1, Days: 127, Now: at(t, "2026-01-05T09:00:00Z")},
			want: want{capacity: 1, remaining: 1},
		},
		{
			// New York springs forward on Sun Mar 8. Friday Mar 6 noon EST: 50 today, 50 on Mon Mar 9, which
			// ends at 23:59:59 EDT (UTC-4) = Tue 03:59:59 UTC (the Friday before ended at 04:59:59 UTC).
			name: "New York spring forward", zone: "America/New_York",
			in:   schedule.EstimateInput{Recipients: 100, Mailboxes: mailboxes(1, 50), DailyLimit: 50, Days: 31, Now: at(t, "2026-03-06T17:00:00Z")},
			want: want{capacity: 50, remaining: 50, days: 2, finish: "2026-03-10T03:59:59Z", localHour: 23},
		},
		{
			// New York falls back on Sun Nov 1. Friday Oct 30 noon EDT: 50 today, 50 on Mon Nov 2, ending 23:59:59
			// EST (UTC-5) = Tue 04:59:59 UTC.
			name: "New York fall back", zone: "America/New_York",
			in:   schedule.EstimateInput{Recipients: 100, Mailboxes: mailboxes(1, 50), DailyLimit: 50, Days: 31, Now: at(t, "2026-10-30T16:00:00Z")},
			want: want{capacity: 50, remaining: 50, days: 2, finish: "2026-11-03T04:59:59Z", localHour: 23},
		},
		{
			// Berlin springs forward on Sun Mar 29. Friday Mar 27 10:00 CET: 50 today, 50 on Mon Mar 30, ending
			// 23:59:59 CEST (UTC+2) = 21:59:59 UTC.
			name: "Berlin spring forward", zone: "Europe/Berlin",
			in:   schedule.EstimateInput{Recipients: 100, Mailboxes: mailboxes(1, 50), DailyLimit: 50, Days: 31, Now: at(t, "2026-03-27T09:00:00Z")},
			want: want{capacity: 50, remaining: 50, days: 2, finish: "2026-03-30T21:59:59Z", localHour: 23},
		},
		{
			// Every day a sending day; Saturday Mar 28 10:00 CET: 50 today, 50 on Sunday Mar 29 itself, the
			// 23-hour changeover day, which still ends at 23:59:59 local = 21:59:59 UTC.
			name: "Berlin changeover day", zone: "Europe/Berlin",
			in:   schedule.EstimateInput{Recipients: 100, Mailboxes: mailboxes(1, 50), DailyLimit: 50, Days: 127, Now: at(t, "2026-03-28T09:00:00Z")},
			want: want{capacity: 50, remaining: 50, days: 2, finish: "2026-03-29T21:59:59Z", localHour: 23},
		},
		{
			// Berlin falls back on Sun Oct 25. Friday Oct 23: 50 today, 50 on Mon Oct 26, ending 23:59:59 CET
			// (UTC+1) = 22:59:59 UTC.
			name: "Berlin fall back", zone: "Europe/Berlin",
			in:   schedule.EstimateInput{Recipients: 100, Mailboxes: mailboxes(1, 50), DailyLimit: 50, Days: 31, Now: at(t, "2026-10-23T08:00:00Z")},
			want: want{capacity: 50, remaining: 50, days: 2, finish: "2026-10-26T22:59:59Z", localHour: 23},
		},
		{
			// 23:30 UTC on Friday Jan 9 is 08:30 on Saturday Jan 10 in Tokyo: today is not a sending day there (in
			// UTC it would be). 60 recipients = ceil(60/50) = 2 days: Mon 12, Tue 13, ending 23:59:59 JST (UTC+9)
			// = 14:59:59 UTC.
			name: "Tokyo is already on the weekend", zone: "Asia/Tokyo",
			in:   schedule.EstimateInput{Recipients: 60, Mailboxes: mailboxes(1, 50), DailyLimit: 50, Days: 31, Now: at(t, "2026-01-09T23:30:00Z")},
			want: want{capacity: 50, remaining: 0, days: 2, finish: "2026-01-13T14:59:59Z", localHour: 23},
		},
		{
			// 05:00 UTC on Saturday Jan 10 is still Friday Jan 9, 21:00 in Los Angeles: today sends 50, the other
			// 10 go on Mon Jan 12, ending 23:59:59 PST (UTC-8) = Tue 07:59:59 UTC.
			name: "Los Angeles is still on Friday", zone: "America/Los_Angeles",
			in:   schedule.EstimateInput{Recipients: 60, Mailboxes: mailboxes(1, 50), DailyLimit: 50, Days: 31, Now: at(t, "2026-01-10T05:00:00Z")},
			want: want{capacity: 50, remaining: 50, days: 2, finish: "2026-01-13T07:59:59Z", localHour: 23},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := tc.in
			in.Location = zone(t, tc.zone)
			got := schedule.Estimate(in)
			require.Equal(t, in.Recipients, got.Recipients)
			require.Equal(t, len(in.Mailboxes), got.Mailboxes)
			require.Equal(t, tc.want.capacity, got.DailyCapacity, "daily capacity")
			require.Equal(t, tc.want.remaining, got.RemainingToday, "remaining today")
			if tc.want.days == 0 {
				require.Nil(t, got.SendingDays, "sending days")
				require.Nil(t, got.EstimatedFinishAt, "finish")
				return
			}
			require.NotNil(t, got.SendingDays)
			require.Equal(t, tc.want.days, *got.SendingDays, "sending days")
			require.NotNil(t, got.EstimatedFinishAt)
			require.Equal(t, at(t, tc.want.finish), got.EstimatedFinishAt.UTC(), "finish")
			local := got.EstimatedFinishAt.In(in.Location)
			require.Equal(t, [3]int{tc.want.localHour, 59, 59}, [3]int{local.Hour(), local.Minute(), local.Second()}, "finish in the zone")
		})
	}
}

func TestEstimateWithoutLocationCountsInUTC(t *testing.T) {
	t.Parallel()
	// Friday 23:30 UTC (already Saturday east of UTC): without a zone the day is UTC's Friday, so it sends.
	got := schedule.Estimate(schedule.EstimateInput{Recipients: 10, Mailboxes: mailboxes(1, 50), DailyLimit: 50, Days: 31,
		Now: at(t, "2026-01-09T23:30:00Z")})
	require.Equal(t, 50, got.RemainingToday)
	require.Equal(t, at(t, "2026-01-09T23:59:59Z"), *got.EstimatedFinishAt)
}

func TestWeekdaysCountMondayAsBitZero(t *testing.T) {
	t.Parallel()
	require.True(t, schedule.Weekdays(1).Has(time.Monday))
	require.False(t, schedule.Weekdays(1).Has(time.Sunday))
	require.True(t, schedule.Weekdays(64).Has(time.Sunday))
	require.False(t, schedule.Weekdays(64).Has(time.Saturday))
	for d := time.Sunday; d <= time.Saturday; d++ {
		require.Equal(t, d != time.Saturday && d != time.Sunday, schedule.Weekdays(31).Has(d), d.String())
		require.False(t, schedule.Weekdays(128).Has(d), "bits above Sunday are no day")
	}
}
