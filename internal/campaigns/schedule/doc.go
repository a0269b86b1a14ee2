// Package schedule is the calendar arithmetic of campaigns: which days a campaign sends on in its time zone and
// how far its audience reaches across them. It is pure (no database, no clock of its own: every function takes
// now), so the estimate and, later, the sequence engine's window math are table-tested against hand
// computations, including daylight saving changes.
//
// Invariants:
//
//   - Days are civil dates in the campaign's zone. A date is carried as midnight UTC of that date, so adding
//     days never meets a daylight saving change; a wall-clock time in the zone is made only at the end, with
//     time.Date in the zone's *time.Location, which is what keeps results DST-correct.
//   - Weekdays are the legacy bitmask of part 3 (bit 0 = Monday ... bit 6 = Sunday); 0 means no sending day.
//   - A mailbox sends at most min(daily limit, its campaign_limit) campaign emails a day; what it has already
//     sent today counts against that, never below zero.
//   - Sending windows are wall-clock minutes of the campaign's zone (Week, Span). A window on a daylight saving
//     changeover day is neither dropped nor doubled: a skipped start opens when the clocks jump, a repeated
//     time is its first occurrence (Week.Next).
//   - Nothing iterates per day over an unbounded range: whole weeks are skipped arithmetically, and a projection
//     past the horizon (two years) is cut off before any date is built.
package schedule
