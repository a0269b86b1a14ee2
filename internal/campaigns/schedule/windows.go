package schedule

import "time"

// Span is one sending window of a day: wall-clock minutes of the campaign's zone, [Start, End), 0 <= Start <
// End <= 1440.
type Span struct {
	Start, End int
}

// Week is when a campaign may send: the spans of each weekday, indexed by time.Weekday (Sunday = 0), each day's
// spans in order and apart. It is built once per campaign from schedule_windows, or from the legacy days,
// start_time and end_time when schedule_windows is empty.
type Week [7][]Span

// LegacyWeek is the week the legacy fields describe: the span [start, end) minutes on every day of days.
func LegacyWeek(days Weekdays, start, end int) Week {
	var w Week
	for d := time.Sunday; d <= time.Saturday; d++ {
		if days.Has(d) && start < end {
			w[d] = []Span{{Start: start, End: end}}
		}
	}
	return w
}

// empty reports whether the week has no span at all.
func (w Week) empty() bool {
	for _, day := range w {
		if len(day) > 0 {
			return false
		}
	}
	return true
}

// at is the instant of minute m of the civil date day (midnight UTC of that date) in loc. A wall-clock time a
// daylight saving change skips is the instant the clocks jump, and one the change repeats is its first
// occurrence, so a span on a changeover day is neither dropped nor counted twice. Go's time.Date resolves such
// times differently on either side of UTC, so the offsets in effect before and after are tried instead.
func at(day time.Time, m int, loc *time.Location) time.Time {
	y, mo, d := day.Date()
	wall := time.Date(y, mo, d, 0, 0, 0, 0, time.UTC).Add(time.Duration(m) * time.Minute)
	_, before := wall.Add(-24 * time.Hour).In(loc).Zone()
	_, after := wall.Add(24 * time.Hour).In(loc).Zone()
	first := wall.Add(-time.Duration(before) * time.Second) // wall read with the earlier offset
	second := wall.Add(-time.Duration(after) * time.Second)
	shows := func(t time.Time) bool {
		local := t.In(loc)
		return time.Date(local.Year(), local.Month(), local.Day(), local.Hour(), local.Minute(), 0, 0, time.UTC).Equal(wall)
	}
	switch ok1, ok2 := shows(first), shows(second); {
	case ok1 && ok2:
		if second.Before(first) {
			return second.In(loc)
		}
		return first.In(loc)
	case ok1:
		return first.In(loc)
	case ok2:
		return second.In(loc)
	}
	// Skipped: read with the offset before the jump, the wall time falls after it; the jump starts that period.
	start, _ := first.In(loc).ZoneBounds()
	return start
}

// Next is the earliest instant at or after t inside one of w's spans in loc, and the end of that span; ok is
// false when w has no span. At most eight civil dates are looked at.
func (w Week) Next(t time.Time, loc *time.Location) (start, end time.Time, ok bool) {
	if w.empty() {
		return time.Time{}, time.Time{}, false
	}
	day := dateOf(t, loc)
	for range 8 {
		for _, s := range w[day.Weekday()] {
			from, to := at(day, s.Start, loc), at(day, s.End, loc)
			if !to.After(from) || !to.After(t) {
				continue
			}
			if from.Before(t) {
				from = t
			}
			return from, to, true
		}
		day = day.AddDate(0, 0, 1)
	}
	return time.Time{}, time.Time{}, false
}
