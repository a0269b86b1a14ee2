package sending

import (
	"sync"
	"time"

	dbq "github.com/outflowhq/outflow/gen/db"
)

// MailboxDay is the day a mailbox's capped sends at now are charged to (mailbox_send_days.day): now's date in
// the mailbox's zone (UTC when it has none or it does not load), as midnight UTC of that date. The pipeline and
// the campaign estimate read the daily counters through it, so both name the same day.
func MailboxDay(now time.Time, tz string) time.Time {
	y, m, d := now.In(Zone(tz)).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// zones caches loaded time zones by name (loading reads the zone database).
var zones sync.Map

// Zone is a mailbox's time zone by name, UTC when it has none or the name does not load: the zone its day (and
// its daily cap) turns in.
func Zone(tz string) *time.Location {
	if tz == "" {
		return time.UTC
	}
	if loc, ok := zones.Load(tz); ok {
		return loc.(*time.Location)
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return time.UTC
	}
	zones.Store(tz, loc)
	return loc
}

// NextSlot is the earliest time m may start its next capped send by its gap (now or later); the daily cap
// is checked when the send is attempted.
func NextSlot(m dbq.Mailbox, now time.Time) time.Time {
	if m.LastCappedSendAt == nil {
		return now
	}
	if next := m.LastCappedSendAt.Add(time.Duration(m.MinWaitTime) * time.Second); next.After(now) {
		return next
	}
	return now
}
