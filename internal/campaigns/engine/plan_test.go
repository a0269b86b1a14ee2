package engine_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/campaigns/schedule"
)

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}

// instant parses an RFC 3339 instant; a bare date is midnight UTC of that date (how civil days are carried).
func instant(t *testing.T, s string) time.Time {
	t.Helper()
	layout := time.RFC3339
	if len(s) == len(time.DateOnly) {
		layout = time.DateOnly
	}
	v, err := time.Parse(layout, s)
	require.NoError(t, err)
	return v
}

// randomContacts are n contact ids drawn from a fixed seed, so the distribution checks are random in shape but
// give the same counts on every run.
func randomContacts(t *testing.T, n int, seed byte) []uuid.UUID {
	t.Helper()
	r := rand.NewChaCha8([32]byte{seed})
	out := make([]uuid.UUID, n)
	for i := range out {
		id, err := uuid.NewRandomFromReader(r)
		require.NoError(t, err)
		out[i] = id
	}
	return out
}

func TestRampAllowanceGrowsByTheIncrementUntilTheCeiling(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                  string
		start, inc, ceil, lvl int32
		want                  int32
	}{
		{"the first sending day allows ramp_start", 10, 5, 50, 0, 10},
		{"the second day adds one increment", 10, 5, 50, 1, 15},              // 10 + 1*5
		{"level 8 reaches the ceiling exactly", 10, 5, 50, 8, 50},            // 10 + 8*5 = 50
		{"past the ceiling it stays at the ceiling", 10, 5, 50, 9, 50},       // 10 + 9*5 = 55, capped at 50
		{"an increment of 0 keeps ramp_start forever", 10, 0, 50, 30, 10},    // 10 + 30*0
		{"a start at the ceiling never grows", 50, 5, 50, 3, 50},             // 50 + 15 = 65, capped at 50
		{"a huge level does not wrap around", 10, 1000, 1000, 1 << 30, 1000}, // 10 + 2^30*1000 overflows int32, not the ceiling
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, engine.RampAllowance(tc.start, tc.inc, tc.ceil, tc.lvl), tc.name)
	}
}

func TestRampLevelAdvancesByOneOnlyOnANewSendingDay(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name         string
		level        int32
		rampDay, day string // civil dates; rampDay "" = the campaign never sent
		want         int32
	}{
		{"before the first send the stored level is the level", 0, "", "2026-03-02", 0},
		{"the same day keeps the level", 3, "2026-03-02", "2026-03-02", 3},
		{"the next day advances by one", 3, "2026-03-02", "2026-03-03", 4},
		{"idle days in between still advance by one only", 3, "2026-03-02", "2026-03-09", 4},
		{"an earlier day never advances", 3, "2026-03-02", "2026-03-01", 3},
	}
	for _, tc := range cases {
		var rampDay *time.Time
		if tc.rampDay != "" {
			d := instant(t, tc.rampDay)
			rampDay = &d
		}
		require.Equal(t, tc.want, engine.RampLevelOn(tc.level, rampDay, instant(t, tc.day)), tc.name)
	}
}

func TestRampAllowanceOverAWeekGrowsOncePerSendingDayWhateverTheSendsPerDay(t *testing.T) {
	t.Parallel()
	// The campaign stores the level and the day after each planning pass, as the engine does; several passes a
	// day must not advance it. Monday 10, Tuesday 15, Wednesday 20, (no sending Thursday) Friday 25.
	var level int32
	var rampDay *time.Time
	for _, tc := range []struct {
		day  string
		want int32
	}{{"2026-03-02", 10}, {"2026-03-03", 15}, {"2026-03-04", 20}, {"2026-03-06", 25}} {
		day := instant(t, tc.day)
		for pass := range 3 {
			level = engine.RampLevelOn(level, rampDay, day)
			rampDay = &day
			require.Equal(t, tc.want, engine.RampAllowance(10, 5, 50, level), "%s pass %d", tc.day, pass)
		}
	}
}

func TestAllowanceIsTheDailyLimitLoweredByTheRampWhileTheRampIsBelowIt(t *testing.T) {
	t.Parallel()
	ramp := campaign.Settings{DailyLimit: 30, RampEnabled: true, RampStart: 10, RampIncrement: 5, RampCeiling: 50}
	off := ramp
	off.RampEnabled = false
	wide := ramp
	wide.DailyLimit = 100
	cases := []struct {
		name       string
		s          campaign.Settings
		level      int32
		want       int32
		wantByRamp bool
	}{
		{"ramp off: the daily limit on the first day", off, 0, 30, false},
		{"ramp off: the daily limit at any level", off, 9, 30, false},
		{"ramp on, first day: ramp_start", ramp, 0, 10, true},
		{"ramp on, level 3: 10 + 3*5", ramp, 3, 25, true},
		{"ramp equal to the daily limit: the limit is the bound", ramp, 4, 30, false},   // 10 + 4*5 = 30
		{"ramp above the daily limit: the limit", ramp, 6, 30, false},                   // 10 + 6*5 = 40 > 30
		{"ceiling below the daily limit: the ceiling, by the ramp", wide, 20, 50, true}, // min(10+100, 50) < 100
	}
	for _, tc := range cases {
		n, byRamp := engine.Allowance(tc.s, tc.level)
		require.Equal(t, tc.want, n, tc.name)
		require.Equal(t, tc.wantByRamp, byRamp, tc.name)
	}
}

// week is a schedule.Week with span on each of days.
func week(span schedule.Span, days ...time.Weekday) schedule.Week {
	var w schedule.Week
	for _, d := range days {
		w[d] = []schedule.Span{span}
	}
	return w
}

func TestWeekOfTakesScheduleWindowsIndexedFromSundayOverTheLegacyFields(t *testing.T) {
	t.Parallel()
	s := campaign.Settings{Days: 31, StartTime: "09:00", EndTime: "17:00", ScheduleWindows: [][]campaign.Window{
		{{Start: 600, End: 660}}, {}, {}, {}, {}, {},
		{{Start: 0, End: 60}, {Start: 1380, End: 1440}},
	}}
	var want schedule.Week // Monday to Friday 09:00-17:00 is ignored
	want[time.Sunday] = []schedule.Span{{Start: 600, End: 660}}
	want[time.Saturday] = []schedule.Span{{Start: 0, End: 60}, {Start: 1380, End: 1440}}
	require.Equal(t, want, engine.WeekOf(s))
}

func TestWeekOfReadsTheLegacyDaysAsAMondayFirstBitmask(t *testing.T) {
	t.Parallel()
	nineToFive := schedule.Span{Start: 540, End: 1020}
	cases := []struct {
		name       string
		days       int16
		start, end string
		windows    [][]campaign.Window
		want       schedule.Week
	}{
		{"bit 0 is Monday", 1, "09:00", "17:00", nil, week(nineToFive, time.Monday)},
		{"bit 5 is Saturday", 1 << 5, "09:00", "17:00", nil, week(nineToFive, time.Saturday)},
		{"bit 6 is Sunday", 1 << 6, "09:00", "17:00", nil, week(nineToFive, time.Sunday)},
		{"31 is Monday to Friday", 31, "09:00", "17:00", nil,
			week(nineToFive, time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday)},
		{"end_time 24:00 is the end of the day", 1 << 6, "00:00", "24:00", nil, week(schedule.Span{Start: 0, End: 1440}, time.Sunday)},
		{"minutes count", 1, "08:30", "12:45", nil, week(schedule.Span{Start: 510, End: 765}, time.Monday)}, // 8*60+30, 12*60+45
		{"no day is no span", 0, "09:00", "17:00", nil, schedule.Week{}},
		{"an empty schedule_windows is no schedule_windows", 1, "09:00", "17:00", [][]campaign.Window{}, week(nineToFive, time.Monday)},
	}
	for _, tc := range cases {
		s := campaign.Settings{Days: tc.days, StartTime: tc.start, EndTime: tc.end, ScheduleWindows: tc.windows}
		require.Equal(t, tc.want, engine.WeekOf(s), tc.name)
	}
}

func TestNextWindowStartOfACampaignIsRightAcrossDaylightSavingChangesInNewYorkAndBerlin(t *testing.T) {
	t.Parallel()
	ny, berlin := zone(t, "America/New_York"), zone(t, "Europe/Berlin")
	legacy := func(days int16, start, end string) campaign.Settings {
		return campaign.Settings{Days: days, StartTime: start, EndTime: end}
	}
	sundayWindow := func(start, end int) campaign.Settings {
		return campaign.Settings{ScheduleWindows: [][]campaign.Window{{{Start: start, End: end}}, {}, {}, {}, {}, {}, {}}}
	}
	const sunday, wednesday, everyDay = 1 << 6, 1 << 2, 127
	// New York: 2026-03-08 02:00 EST (07:00Z) jumps to 03:00 EDT; 2026-11-01 02:00 EDT (06:00Z) falls back to
	// 01:00 EST, so 01:00-02:00 is lived twice (05:00Z-06:00Z EDT, then 06:00Z-07:00Z EST). Berlin: 2026-03-29
	// 02:00 CET (01:00Z) jumps to 03:00 CEST; 2026-10-25 03:00 CEST (01:00Z) falls back to 02:00 CET. All four
	// are Sundays. EST = UTC-5, EDT = UTC-4, CET = UTC+1, CEST = UTC+2.
	cases := []struct {
		name               string
		s                  campaign.Settings
		loc                *time.Location
		now                string
		wantStart, wantEnd string
	}{
		// 01:00 EST = 06:00Z; 04:00 EDT = 08:00Z: two real hours, the skipped one is not owed.
		{"New York spring: a window across the skipped hour keeps the hours that exist",
			legacy(sunday, "01:00", "04:00"), ny, "2026-03-07T12:00:00Z", "2026-03-08T06:00:00Z", "2026-03-08T08:00:00Z"},
		// 00:30 EST = 05:30Z; 02:30 does not exist, the window closes when the clocks jump, 07:00Z.
		{"New York spring: a window ending in the skipped hour closes at the jump",
			sundayWindow(30, 150), ny, "2026-03-07T12:00:00Z", "2026-03-08T05:30:00Z", "2026-03-08T07:00:00Z"},
		// Saturday 18:00 EST is past the window; Sunday 09:00 EDT = 13:00Z to 17:00 EDT = 21:00Z.
		{"New York spring: the next day's window is in the new offset",
			legacy(everyDay, "09:00", "17:00"), ny, "2026-03-07T23:00:00Z", "2026-03-08T13:00:00Z", "2026-03-08T21:00:00Z"},
		// 00:00 EST = 05:00Z to Monday 00:00 EDT = 04:00Z: a 23-hour day.
		{"New York spring: a whole-day window lasts 23 hours",
			legacy(sunday, "00:00", "24:00"), ny, "2026-03-07T12:00:00Z", "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z"},
		// Wednesday 2026-03-04 18:00 EST is past the only day's window: Wednesday 2026-03-11 09:00 EDT = 13:00Z.
		{"New York spring: a one-day week waits a week, into the new offset",
			legacy(wednesday, "09:00", "17:00"), ny, "2026-03-04T23:00:00Z", "2026-03-11T13:00:00Z", "2026-03-11T21:00:00Z"},
		// 01:15 and 01:45 happen twice on 2026-11-01; the window is their first occurrence, EDT: 05:15Z-05:45Z.
		{"New York autumn: a window inside the repeated hour opens at its first occurrence",
			sundayWindow(75, 105), ny, "2026-11-01T04:00:00Z", "2026-11-01T05:15:00Z", "2026-11-01T05:45:00Z"},
		// 06:20Z is 01:20 EST, inside the window by the clock a second time: not a second window. Next Sunday
		// 2026-11-08 01:15 EST = 06:15Z.
		{"New York autumn: the repeated hour's second pass is not a second window",
			sundayWindow(75, 105), ny, "2026-11-01T06:20:00Z", "2026-11-08T06:15:00Z", "2026-11-08T06:45:00Z"},
		// 00:00 EDT = 04:00Z to Monday 00:00 EST = 05:00Z: a 25-hour day.
		{"New York autumn: a whole-day window lasts 25 hours",
			legacy(sunday, "00:00", "24:00"), ny, "2026-10-31T12:00:00Z", "2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z"},
		// Saturday 18:00 EDT is past the window; Sunday 09:00 EST = 14:00Z to 17:00 EST = 22:00Z.
		{"New York autumn: the next day's window is in the new offset",
			legacy(everyDay, "09:00", "17:00"), ny, "2026-10-31T22:00:00Z", "2026-11-01T14:00:00Z", "2026-11-01T22:00:00Z"},
		// 01:00 CET = 00:00Z; 04:00 CEST = 02:00Z.
		{"Berlin spring: a window across the skipped hour keeps the hours that exist",
			legacy(sunday, "01:00", "04:00"), berlin, "2026-03-28T12:00:00Z", "2026-03-29T00:00:00Z", "2026-03-29T02:00:00Z"},
		// 02:15 does not exist: the window opens at the jump, 03:00 CEST = 01:00Z, to 04:00 CEST = 02:00Z.
		{"Berlin spring: a window starting in the skipped hour opens at the jump",
			sundayWindow(135, 240), berlin, "2026-03-28T12:00:00Z", "2026-03-29T01:00:00Z", "2026-03-29T02:00:00Z"},
		// 00:30 CET = 23:30Z the day before; 02:30 does not exist, the window closes at the jump, 01:00Z.
		{"Berlin spring: a window ending in the skipped hour closes at the jump",
			sundayWindow(30, 150), berlin, "2026-03-28T12:00:00Z", "2026-03-28T23:30:00Z", "2026-03-29T01:00:00Z"},
		// Saturday 18:00 CET = 17:00Z is past the window; Sunday 09:00 CEST = 07:00Z to 17:00 CEST = 15:00Z.
		{"Berlin spring: the next day's window is in the new offset",
			legacy(everyDay, "09:00", "17:00"), berlin, "2026-03-28T17:00:00Z", "2026-03-29T07:00:00Z", "2026-03-29T15:00:00Z"},
		// Sunday 2026-03-22 13:00 CET is past the only day's window: 2026-03-29 10:00 CEST = 08:00Z.
		{"Berlin spring: a Sunday-only week waits a week, into the new offset",
			legacy(sunday, "10:00", "12:00"), berlin, "2026-03-22T12:00:00Z", "2026-03-29T08:00:00Z", "2026-03-29T10:00:00Z"},
		// 01:00 CEST = 23:00Z the day before; 04:00 CET = 03:00Z: both passes of 02:00-03:00 are inside.
		{"Berlin autumn: a window across the repeated hour holds both passes",
			sundayWindow(60, 240), berlin, "2026-10-24T12:00:00Z", "2026-10-24T23:00:00Z", "2026-10-25T03:00:00Z"},
		// 02:15 and 02:45 happen twice on 2026-10-25; the first occurrence is CEST: 00:15Z-00:45Z.
		{"Berlin autumn: a window inside the repeated hour opens at its first occurrence",
			sundayWindow(135, 165), berlin, "2026-10-24T12:00:00Z", "2026-10-25T00:15:00Z", "2026-10-25T00:45:00Z"},
		// 00:50Z is 02:50 CEST, after the first pass: next Sunday 2026-11-01 02:15 CET = 01:15Z.
		{"Berlin autumn: the repeated hour's second pass is not a second window",
			sundayWindow(135, 165), berlin, "2026-10-25T00:50:00Z", "2026-11-01T01:15:00Z", "2026-11-01T01:45:00Z"},
		// 01:30 CEST = 23:30Z the day before; 02:30 first occurs at 02:30 CEST = 00:30Z: one hour.
		{"Berlin autumn: a window ending in the repeated hour ends at its first occurrence",
			sundayWindow(90, 150), berlin, "2026-10-24T12:00:00Z", "2026-10-24T23:30:00Z", "2026-10-25T00:30:00Z"},
		// 00:00 CEST = 22:00Z the day before, to Monday 00:00 CET = 23:00Z: a 25-hour day.
		{"Berlin autumn: a whole-day window lasts 25 hours",
			legacy(sunday, "00:00", "24:00"), berlin, "2026-10-24T12:00:00Z", "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z"},
		// Saturday 18:00 CEST = 16:00Z; Sunday 09:00 CET = 08:00Z to 17:00 CET = 16:00Z.
		{"Berlin autumn: the next day's window is in the new offset",
			legacy(everyDay, "09:00", "17:00"), berlin, "2026-10-24T16:00:00Z", "2026-10-25T08:00:00Z", "2026-10-25T16:00:00Z"},
		// 09:00Z is 10:00 CET, inside: now itself, to 17:00 CET.
		{"Berlin autumn: inside the window it is now",
			legacy(everyDay, "09:00", "17:00"), berlin, "2026-10-25T09:00:00Z", "2026-10-25T09:00:00Z", "2026-10-25T16:00:00Z"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			start, end, ok := engine.WeekOf(tc.s).Next(instant(t, tc.now), tc.loc)
			require.True(t, ok)
			require.Equal(t, instant(t, tc.wantStart), start.UTC())
			require.Equal(t, instant(t, tc.wantEnd), end.UTC())
		})
	}
}

func TestChooseVariantTakesThePromotedVariantWhateverItsWeight(t *testing.T) {
	t.Parallel()
	step := uuid.UUID{0xa}
	vs := []engine.Variant{{ID: uuid.UUID{1}, Weight: 100}, {ID: uuid.UUID{2}, Weight: 0, Promoted: true}, {ID: uuid.UUID{3}, Weight: 100}}
	for _, contact := range randomContacts(t, 500, 1) {
		i, ok := engine.ChooseVariant(vs, contact, step)
		require.True(t, ok)
		require.Equal(t, 1, i, "contact %s", contact)
	}
}

func TestChooseVariantDrawsNothingWhenNoVariantHasWeight(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		vs   []engine.Variant
	}{
		{"no variants", nil},
		{"every weight 0", []engine.Variant{{ID: uuid.UUID{1}}, {ID: uuid.UUID{2}}}},
		{"a negative weight counts as 0", []engine.Variant{{ID: uuid.UUID{1}, Weight: -5}, {ID: uuid.UUID{2}}}},
	}
	for _, tc := range cases {
		for _, contact := range randomContacts(t, 50, 2) {
			_, ok := engine.ChooseVariant(tc.vs, contact, uuid.UUID{0xa})
			require.False(t, ok, tc.name)
		}
	}
}

func TestChooseVariantNeverDrawsAWeightZeroVariant(t *testing.T) {
	t.Parallel()
	vs := []engine.Variant{{ID: uuid.UUID{1}}, {ID: uuid.UUID{2}, Weight: 10}, {ID: uuid.UUID{3}, Weight: -1}, {ID: uuid.UUID{4}, Weight: 5}}
	seen := map[int]int{}
	for _, contact := range randomContacts(t, 2000, 3) {
		i, ok := engine.ChooseVariant(vs, contact, uuid.UUID{0xa})
		require.True(t, ok)
		seen[i]++
	}
	require.Zero(t, seen[0]+seen[2], "weight 0 and negative weights are never drawn")
	require.Positive(t, seen[1])
	require.Positive(t, seen[3])
}

func TestChooseVariantGivesTheSameContactAndStepTheSameVariant(t *testing.T) {
	t.Parallel()
	vs := []engine.Variant{{ID: uuid.UUID{1}, Weight: 50}, {ID: uuid.UUID{2}, Weight: 50}}
	stepA, stepB := uuid.UUID{0xa}, uuid.UUID{0xb}
	same := 0
	for _, contact := range randomContacts(t, 1000, 4) {
		first, _ := engine.ChooseVariant(vs, contact, stepA)
		again, _ := engine.ChooseVariant(vs, contact, stepA)
		require.Equal(t, first, again, "a re-planned lead keeps its variant")
		other, _ := engine.ChooseVariant(vs, contact, stepB)
		if other == first {
			same++
		}
	}
	// The step is part of the draw: for 50/50 variants another step agrees for about half the contacts
	// (binomial, sigma = sqrt(1000*0.5*0.5) ~ 16); 400-600 is over 6 sigma wide, while a draw that ignored the
	// step would agree for all 1,000.
	require.InDelta(t, 500, same, 100)
}

func TestChooseVariantSplitsManyContactsByWeight(t *testing.T) {
	t.Parallel()
	vs := []engine.Variant{{ID: uuid.UUID{1}, Weight: 20}, {ID: uuid.UUID{2}, Weight: 30}, {ID: uuid.UUID{3}, Weight: 50}}
	counts := make([]int, len(vs))
	for _, contact := range randomContacts(t, 10000, 5) {
		i, ok := engine.ChooseVariant(vs, contact, uuid.UUID{0xa})
		require.True(t, ok)
		counts[i]++
	}
	// Expected 2,000 / 3,000 / 5,000. Each count is binomial with sigma = sqrt(10000*p*(1-p)) = 40, 46, 50, so
	// +-200 is at least 4 sigma (an unbiased draw strays that far less than once in 10,000 seeds; the seed is
	// fixed anyway). A uniform draw (3,333 each), swapped weights (off by 1,000) or a dropped variant all fail.
	for i, want := range []float64{2000, 3000, 5000} {
		require.InDelta(t, want, counts[i], 200, "variant %d of 20/30/50: %v", i, counts)
	}
}

func TestContactAndMailboxProvidersMapToTheSameESPFamilies(t *testing.T) {
	t.Parallel()
	contacts := []struct{ provider, want string }{
		{"", ""},
		{"   ", ""},
		{"gmail", "google"},
		{" Google Workspace ", "google"},
		{"GMAIL", "google"},
		{"Microsoft 365", "microsoft"},
		{"outlook", "microsoft"},
		{"Office365", "microsoft"},
		{"hotmail", "microsoft"},
		{"live", "microsoft"},
		{"unknown", ""},
		{"olive hosting", "other"},
		{"yahoo", "other"},
		{"zoho", "other"},
		{"proton", "other"},
	}
	for _, tc := range contacts {
		require.Equal(t, tc.want, engine.ContactESP(tc.provider), "contact esp_provider %q", tc.provider)
	}
	mailboxes := []struct{ provider, want string }{
		{"gmail", "google"}, {"outlook", "microsoft"}, {"smtp_imap", "other"}, {"", "other"},
	}
	for _, tc := range mailboxes {
		require.Equal(t, tc.want, engine.MailboxESP(tc.provider), "mailbox provider %q", tc.provider)
	}
	// The sender choice compares the two, so the families must line up.
	require.Equal(t, engine.MailboxESP("gmail"), engine.ContactESP("Google Workspace"))
	require.Equal(t, engine.MailboxESP("outlook"), engine.ContactESP("Outlook.com"))
	require.NotEqual(t, engine.MailboxESP("gmail"), engine.ContactESP("Microsoft 365"))
}

func TestContactSlotIsTheFirstPreferredHourOfTheContactsClock(t *testing.T) {
	t.Parallel()
	ny, berlin := zone(t, "America/New_York"), zone(t, "Europe/Berlin")
	contact := uuid.UUID{0xc}
	// EDT = UTC-4 (summer), EST = UTC-5, CEST = UTC+2, CET = UTC+1. 2026-06-01 is a Monday; 2026-06-06 a
	// Saturday. The DST days (2026-03-08, 2026-11-01 in New York; 2026-03-29, 2026-10-25 in Berlin) are Sundays,
	// so those rows send on weekends (weight 1).
	cases := []struct {
		name    string
		now     string
		loc     *time.Location
		hours   []int
		weekend float64
		want    string // "" = no slot within eight days
	}{
		// 08:00 EDT: the 09:00 EDT hour, 13:00Z.
		{"before the hours: the first preferred hour", "2026-06-01T12:00:00Z", ny, []int{9, 10}, 1, "2026-06-01T13:00:00Z"},
		// 10:59:59 EDT is inside hour 10: now, not rounded.
		{"inside a preferred hour: now itself", "2026-06-01T14:59:59Z", ny, []int{9, 10}, 1, "2026-06-01T14:59:59Z"},
		// 11:00 EDT is past hour 10: Tuesday 09:00 EDT.
		{"after the last preferred hour: the next day's first", "2026-06-01T15:00:00Z", ny, []int{9, 10}, 1, "2026-06-02T13:00:00Z"},
		// 08:30 CEST: 09:00 CEST = 07:00Z (09:00 UTC would be 09:00Z).
		{"the hours are the contact's, not UTC", "2026-06-01T06:30:00Z", berlin, []int{9}, 1, "2026-06-01T07:00:00Z"},
		{"out-of-range hours are no hours at all", "2026-06-01T12:00:00Z", ny, []int{24, -1}, 1, ""},
		// Friday 11:00 EDT: Saturday 09:00 EDT.
		{"weekend weight 1: Saturday is a day like any", "2026-06-05T15:00:00Z", ny, []int{9}, 1, "2026-06-06T13:00:00Z"},
		// Friday 11:00 EDT: Monday 09:00 EDT.
		{"weekend weight 0: never on a weekend", "2026-06-05T15:00:00Z", ny, []int{9}, 0, "2026-06-08T13:00:00Z"},
		{"no hours: any hour is now", "2026-06-06T15:00:00Z", ny, nil, 1, "2026-06-06T15:00:00Z"},
		// Saturday 11:00 EDT: Monday 00:00 EDT.
		{"no hours, weekend weight 0: the start of Monday", "2026-06-06T15:00:00Z", ny, nil, 0, "2026-06-08T04:00:00Z"},
		{"no hours, weekend weight 0, a weekday: now", "2026-06-03T03:17:00Z", ny, nil, 0, "2026-06-03T03:17:00Z"},
		// Friday 23:30Z is already Saturday 01:30 CEST: Monday 00:00 CEST = Sunday 22:00Z.
		{"the weekend is the contact's", "2026-06-05T23:30:00Z", berlin, nil, 0, "2026-06-07T22:00:00Z"},
		// Saturday 02:00Z is still Friday 22:00 EDT.
		{"a weekend in UTC is not one in the contact's zone", "2026-06-06T02:00:00Z", ny, nil, 0, "2026-06-06T02:00:00Z"},
		// Sunday 00:00 EST: 02:00 does not exist on 2026-03-08; Monday 02:00 EDT = 06:00Z.
		{"New York spring: a skipped hour is the next day's", "2026-03-08T05:00:00Z", ny, []int{2}, 1, "2026-03-09T06:00:00Z"},
		// The clocks jump to 03:00 EDT = 07:00Z.
		{"New York spring: the hour after the jump", "2026-03-08T05:00:00Z", ny, []int{3}, 1, "2026-03-08T07:00:00Z"},
		// Saturday 10:00 EST is past 09:00: Sunday 09:00 EDT = 13:00Z.
		{"New York spring: the next morning in the new offset", "2026-03-07T15:00:00Z", ny, []int{9}, 1, "2026-03-08T13:00:00Z"},
		// Sunday 00:00 EDT: 01:00 EDT = 05:00Z, the first of the two 01:00s.
		{"New York autumn: the repeated hour's first pass", "2026-11-01T04:00:00Z", ny, []int{1}, 1, "2026-11-01T05:00:00Z"},
		// 02:00 EST = 07:00Z, after both passes of 01:00.
		{"New York autumn: the hour after the repeated one", "2026-11-01T04:00:00Z", ny, []int{2}, 1, "2026-11-01T07:00:00Z"},
		// Sunday 00:00 CET: 02:00 does not exist on 2026-03-29; Monday 02:00 CEST = Monday 00:00Z.
		{"Berlin spring: a skipped hour is the next day's", "2026-03-28T23:00:00Z", berlin, []int{2}, 1, "2026-03-30T00:00:00Z"},
		// The clocks jump to 03:00 CEST = 01:00Z.
		{"Berlin spring: the hour after the jump", "2026-03-28T23:00:00Z", berlin, []int{3}, 1, "2026-03-29T01:00:00Z"},
		// Sunday 00:00 CEST: 03:00 CET = 02:00Z, after both passes of 02:00.
		{"Berlin autumn: the hour after the repeated one", "2026-10-24T22:00:00Z", berlin, []int{3}, 1, "2026-10-25T02:00:00Z"},
		// Sunday 00:00 CEST: the first 02:00 is CEST, 00:00Z.
		{"Berlin autumn: the repeated hour's first pass", "2026-10-24T22:00:00Z", berlin, []int{2}, 1, "2026-10-25T00:00:00Z"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := engine.ContactSlot(instant(t, tc.now), tc.loc, tc.hours, tc.weekend, contact)
			if tc.want == "" {
				require.False(t, ok)
				return
			}
			require.True(t, ok)
			require.Equal(t, instant(t, tc.want), got.UTC())
		})
	}
}

func TestContactSlotWithWeekendWeightOneHalfSendsToAboutHalfTheContactsEachWeekendDay(t *testing.T) {
	t.Parallel()
	saturday, sunday, monday := instant(t, "2026-06-06"), instant(t, "2026-06-07"), instant(t, "2026-06-08")
	counts := map[time.Time]int{}
	for _, contact := range randomContacts(t, 10000, 6) {
		got, ok := engine.ContactSlot(saturday, time.UTC, nil, 0.5, contact)
		require.True(t, ok)
		counts[got]++
	}
	// Each weekend date is its own draw: half go on Saturday at once, half of the rest at the start of Sunday,
	// the others at the start of Monday: 5,000 / 2,500 / 2,500. Binomial sigmas are 50, 43, 43; +-200 is over
	// 4 sigma, while a weight ignored (10,000 on Saturday) or one draw for both days (5,000 on Monday) fails.
	require.Len(t, counts, 3, "only Saturday now, Sunday 00:00 and Monday 00:00: %v", counts)
	require.InDelta(t, 5000, counts[saturday], 200)
	require.InDelta(t, 2500, counts[sunday], 200)
	require.InDelta(t, 2500, counts[monday], 200)
}
