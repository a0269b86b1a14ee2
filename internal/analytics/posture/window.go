package posture

import (
	"fmt"
	"time"

	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// MaxDays is the most UTC days one report covers: a year, leap day included. Longer spans are refused rather
// than cut, so a report never silently answers for less than was asked.
const MaxDays = 366

// DefaultSpan is how far before `to` a deliverability report starts when `from` is not given.
const DefaultSpan = 7 * 24 * time.Hour

// Window is the span a report covers: whole UTC days, First to Last, both included (each a UTC midnight).
type Window struct {
	First, Last time.Time
}

// Days is how many days the window covers.
func (w Window) Days() int { return int(w.Last.Sub(w.First)/(24*time.Hour)) + 1 }

// End is the exclusive end of the window: the UTC midnight after its last day.
func (w Window) End() time.Time { return w.Last.AddDate(0, 0, 1) }

// Dates lists the window's days in order, so reports give every day a point, zero or not.
func (w Window) Dates() []time.Time {
	out := make([]time.Time, 0, w.Days())
	for d := w.First; !d.After(w.Last); d = d.AddDate(0, 0, 1) {
		out = append(out, d)
	}
	return out
}

// utcDay is the UTC midnight starting the UTC day t falls in.
func utcDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// InstantWindow is the window of a report asked for from `from` to `to` (instants; nil when not given): the
// UTC days the half-open span [from, to) touches, so a `to` at a UTC midnight ends the window with the day
// before it, and from equal to to is that one day. `to` defaults to now and `from` to DefaultSpan before `to`.
func InstantWindow(from, to *time.Time, now time.Time) (Window, error) {
	end := now
	if to != nil {
		end = *to
	}
	start := end.Add(-DefaultSpan)
	if from != nil {
		start = *from
	}
	if start.After(end) {
		return Window{}, apierror.BadRequest("invalid_date_range",
			fmt.Sprintf("The query parameter from (%s) is after to (%s); from must be at or before to.",
				start.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339)))
	}
	last := end
	if end.After(start) {
		last = end.Add(-time.Nanosecond)
	}
	return bounded(Window{First: utcDay(start), Last: utcDay(last)})
}

// DateWindow is the window of a report asked for from one date to another, both included (their UTC days).
func DateWindow(from, to time.Time) (Window, error) {
	w := Window{First: utcDay(from), Last: utcDay(to)}
	if w.Last.Before(w.First) {
		return Window{}, apierror.BadRequest("invalid_date_range",
			fmt.Sprintf("The query parameter to (%s) is before from (%s); to must be on or after from.",
				w.Last.Format(time.DateOnly), w.First.Format(time.DateOnly)))
	}
	return bounded(w)
}

// bounded refuses a window over MaxDays.
func bounded(w Window) (Window, error) {
	if n := w.Days(); n > MaxDays {
		return Window{}, apierror.BadRequest("date_range_too_long",
			fmt.Sprintf("The query parameters from and to span %d UTC days; a report covers at most %d.", n, MaxDays))
	}
	return w, nil
}
