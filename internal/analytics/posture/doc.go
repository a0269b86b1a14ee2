// Package posture builds the organization's deliverability report (GET /analytics/deliverability) and the
// warmup report (GET /analytics/warmup) from the analytics rollups.
//
// Invariants:
//   - Reports read rollup rows over whole UTC days (Window) plus a few counts of current state (suppressions
//     in force, dead-lettered webhook deliveries, the mailboxes' warmup settings); never send_tasks or the
//     event tables, so a report costs the same whatever the organization's history.
//   - Every rate, the score and the band come from package metrics; this package only sums counters.
//   - Deliverability counts campaign and direct traffic (warmup exchange traffic is left out), except seed
//     placements, which only warmup traffic carries: they are read from every kind.
//   - The warmup report reads kind warmup; its daily target is the mailbox's warmup ramp (mailbox.Ramp) as its
//     current settings plan it, and a mailbox-scoped caller's report never covers a mailbox outside its list.
//   - A window covers at least one and at most MaxDays UTC days; every day in it has its point, zero or not.
package posture
