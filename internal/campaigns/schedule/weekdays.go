package schedule

import (
	"math/bits"
	"time"
)

// Weekdays is a campaign's set of sending weekdays as part 3's legacy bitmask (bit 0 = Monday ... bit 6 =
// Sunday, 0 to 127): the API and the campaign row store it as days, and every calendar decision reads it
// through Has, so the Monday-first numbering lives in one place.
type Weekdays uint8

// everyDay is the mask of all seven days; bits above it are ignored.
const everyDay Weekdays = 1<<7 - 1

// Has reports whether d is a sending day.
func (w Weekdays) Has(d time.Weekday) bool {
	bit := (int(d) + 6) % 7 // time.Sunday is 0; the mask starts at Monday
	return w&everyDay&(1<<bit) != 0
}

// perWeek is how many sending days a week holds (0 to 7).
func (w Weekdays) perWeek() int {
	return bits.OnesCount8(uint8(w & everyDay))
}

// dateOf is t's civil date in loc, carried as midnight UTC of that date (see the package invariants).
func dateOf(t time.Time, loc *time.Location) time.Time {
	y, m, d := t.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// nthSendingDay returns the date of the n-th sending day (n >= 1) on or after the date from, or false when it
// falls after the date until or w has no sending day. Whole weeks are skipped arithmetically (each holds
// w.perWeek() sending days), so at most seven dates are looked at whatever n is.
func nthSendingDay(from time.Time, w Weekdays, n int, until time.Time) (time.Time, bool) {
	k := w.perWeek()
	if k == 0 || n < 1 || until.Before(from) {
		return time.Time{}, false
	}
	weeks := (n - 1) / k
	// Checked before multiplying, so a huge n cannot overflow: the n-th sending day is at least 7*weeks days
	// after from, which is past until once weeks exceeds span/7.
	if span := int(until.Sub(from) / (24 * time.Hour)); weeks > span/7 {
		return time.Time{}, false
	}
	left := n - weeks*k // 1..k sending days within the next seven dates
	d := from.AddDate(0, 0, 7*weeks)
	for range 7 {
		if w.Has(d.Weekday()) {
			if left--; left == 0 {
				break
			}
		}
		d = d.AddDate(0, 0, 1)
	}
	if d.After(until) {
		return time.Time{}, false
	}
	return d, true
}
