package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestNextFindsTheEarliestSendingInstantAcrossDaysAndDaylightSavingChanges(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	weekdays9to17 := LegacyWeek(31, 9*60, 17*60) // Monday to Friday, 09:00-17:00
	var night Week                               // Sundays 01:30-03:30 only: spans the changeover hours
	night[time.Sunday] = []Span{{Start: 90, End: 210}}
	var gap Week // Sundays 02:15-04:00: starts in New York's skipped hour on 8 March 2026
	gap[time.Sunday] = []Span{{Start: 135, End: 240}}
	var split Week // Tuesdays 08:00-09:00 and 13:00-14:00
	split[time.Tuesday] = []Span{{Start: 480, End: 540}, {Start: 780, End: 840}}
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		require.NoError(t, err)
		return v
	}
	cases := []struct {
		name               string
		week               Week
		loc                *time.Location
		now                string
		wantStart, wantEnd string // RFC 3339 in UTC; "" = no window
	}{
		// Wednesday 2026-03-04 10:00 EST is inside the window: now itself, ending at 17:00 EST (22:00Z).
		{"inside a window it is now", weekdays9to17, ny, "2026-03-04T15:00:00Z", "2026-03-04T15:00:00Z", "2026-03-04T22:00:00Z"},
		// Friday 2026-03-06 18:00 EST is past the window: Monday 09:00 EDT, after the 8 March change (13:00Z).
		{"after Friday's window the next is Monday, in the new offset", weekdays9to17, ny, "2026-03-06T23:00:00Z", "2026-03-09T13:00:00Z", "2026-03-09T21:00:00Z"},
		// Sunday 2026-03-08 00:00 EST: 01:30 EST (06:30Z) exists; 03:30 EDT is 07:30Z. The span lasts one hour.
		{"a span across the skipped hour keeps what exists", night, ny, "2026-03-08T05:00:00Z", "2026-03-08T06:30:00Z", "2026-03-08T07:30:00Z"},
		// Sunday 2026-03-08 at 02:10 wall time does not exist; now = 06:55Z (01:55 EST): still inside.
		{"now just before the jump is inside", night, ny, "2026-03-08T06:55:00Z", "2026-03-08T06:55:00Z", "2026-03-08T07:30:00Z"},
		// 02:15 does not exist on 8 March: the span opens when the clocks jump, 03:00 EDT (07:00Z), to 04:00 EDT.
		{"a span starting in the skipped hour opens at the jump", gap, ny, "2026-03-08T05:00:00Z", "2026-03-08T07:00:00Z", "2026-03-08T08:00:00Z"},
		// The same span a week earlier is ordinary: 02:15 EST = 07:15Z to 04:00 EST = 09:00Z.
		{"the same span on an ordinary Sunday", gap, ny, "2026-03-01T05:00:00Z", "2026-03-01T07:15:00Z", "2026-03-01T09:00:00Z"},
		// Sunday 2026-11-01 (fall back): 01:30 is its first occurrence, EDT (05:30Z); 03:30 EST is 08:30Z.
		{"a span across the repeated hour starts at its first occurrence", night, ny, "2026-11-01T04:00:00Z", "2026-11-01T05:30:00Z", "2026-11-01T08:30:00Z"},
		// Berlin changes on 29 March 2026: 02:00 CET jumps to 03:00 CEST. Sunday 01:30 CET = 00:30Z, 03:30 CEST = 01:30Z.
		{"Berlin's spring change", night, berlin, "2026-03-28T23:00:00Z", "2026-03-29T00:30:00Z", "2026-03-29T01:30:00Z"},
		// Berlin falls back on 25 October 2026: 01:30 CEST = 23:30Z the day before, 03:30 CET = 02:30Z.
		{"Berlin's autumn change", night, berlin, "2026-10-24T22:00:00Z", "2026-10-24T23:30:00Z", "2026-10-25T02:30:00Z"},
		// Tuesday 2026-06-02 09:30 CEST (07:30Z) is between the spans: the afternoon one, 13:00 CEST = 11:00Z.
		{"between two spans of a day the later one", split, berlin, "2026-06-02T07:30:00Z", "2026-06-02T11:00:00Z", "2026-06-02T12:00:00Z"},
		// Tuesday 14:00 CEST is past both: next Tuesday 08:00 CEST (06:00Z), seven days on.
		{"past the last span of the only day, a week later", split, berlin, "2026-06-02T12:00:00Z", "2026-06-09T06:00:00Z", "2026-06-09T07:00:00Z"},
		{"no span at all", Week{}, ny, "2026-06-02T12:00:00Z", "", ""},
	}
	for _, tc := range cases {
		start, end, ok := tc.week.Next(utc(tc.now), tc.loc)
		if tc.wantStart == "" {
			require.False(t, ok, tc.name)
			continue
		}
		require.True(t, ok, tc.name)
		require.Equal(t, utc(tc.wantStart), start.UTC(), tc.name)
		require.Equal(t, utc(tc.wantEnd), end.UTC(), tc.name)
	}
}

func TestLegacyWeekMapsTheMondayFirstBitmask(t *testing.T) {
	t.Parallel()
	w := LegacyWeek(1|1<<6, 540, 1020) // Monday and Sunday
	require.Equal(t, []Span{{540, 1020}}, w[time.Monday])
	require.Equal(t, []Span{{540, 1020}}, w[time.Sunday])
	require.Empty(t, w[time.Saturday])
	require.True(t, LegacyWeek(31, 600, 600).empty(), "an empty time span sends on no day")
}
