package mailbox

import (
	"time"

	dbq "github.com/outflowhq/outflow/gen/db"
)

// Ramp is a mailbox's warmup settings, the input of the daily target the warmup scheduler sends.
type Ramp struct {
	// Anchor is when the ramp started (shifted forward by the time spent paused); zero = warmup disabled.
	Anchor time.Time
	// PausedAt is set while the warmup is paused: the ramp stands still at the day it was paused.
	PausedAt time.Time
	// Base is the first day's volume, Max the ceiling, Increase the volume added per active day.
	Base, Max, Increase int
	// Days is how many days a week warmup runs (1 to 7); the ramp only climbs on those.
	Days int
}

// ActiveDays is how many active warmup days have passed since the anchor at now: the days elapsed, scaled
// by the share of the week warmup runs (five days a week climbs five steps in seven days).
func (r Ramp) ActiveDays(now time.Time) int {
	if r.Anchor.IsZero() {
		return 0
	}
	if !r.PausedAt.IsZero() && r.PausedAt.Before(now) {
		now = r.PausedAt
	}
	if now.Before(r.Anchor) {
		return 0
	}
	days := int(now.Sub(r.Anchor) / (24 * time.Hour))
	perWeek := min(max(r.Days, 1), 7)
	return days/7*perWeek + min(days%7, perWeek)
}

// DailyTarget is today's warmup volume: base plus one increase per active day, never above max; 0 when
// warmup is disabled.
func (r Ramp) DailyTarget(now time.Time) int {
	if r.Anchor.IsZero() {
		return 0
	}
	return min(r.Base+r.Increase*r.ActiveDays(now), r.Max)
}

// RampOf is the warmup ramp a mailbox row describes: the one the warmup scheduler follows, the mailbox API
// shows and the account analytics report.
func RampOf(m dbq.Mailbox) Ramp {
	ramp := Ramp{Base: int(m.WarmupBase), Max: int(m.WarmupMax), Increase: int(m.WarmupIncrease), Days: int(m.WarmupDays)}
	if m.Warmup != nil {
		ramp.Anchor = *m.Warmup
	}
	if m.WarmupPausedAt != nil {
		ramp.PausedAt = *m.WarmupPausedAt
	}
	return ramp
}
