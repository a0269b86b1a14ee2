// Package accounts computes each mailbox's status for the account analytics (GET /analytics/accounts and
// /analytics/accounts/{id}) and the dashboard's mailbox health buckets: provider, status, last sync, health
// with a score and the issues behind it, the open entries of its error log, today's usage against its limits,
// its warmup standing and whether an active campaign sends from it.
//
// Health is a pure function of what the mailbox tables already hold (HealthOf). Each rule adds one issue at a
// level; the mailbox's health is its most severe level (error over warning over healthy), so a mailbox sits in
// exactly one bucket:
//   - status revoked: error; status inactive: warning.
//   - each open (unresolved) error-log entry: error when its severity is error or critical, warning when it
//     is warning, listed without changing the level when it is info.
//   - domain authentication failing: warning while within the deployment's grace period, error once past it
//     (cold mail and warmup then stop, mailbox.AuthBlocked).
//   - the last mailbox sync failed (mailbox_sync.last_error): warning.
//   - warmup enabled and the warmup network rates the mailbox watch or throttled: warning; quarantined or
//     blocked: error.
//
// The score is 100 minus 40 points per error-level issue and 10 per warning-level issue, never below 0.
//
// Invariants:
//   - A value the rules do not know (a status, severity or warmup state outside the schema's) is an error,
//     never a guess: List then fails whole rather than answering a partial list.
//   - Reads are rollups and current-state rows only (mailboxes, mailbox_errors, mailbox_sync,
//     mailbox_send_days, campaign_mailboxes, analytics_mailbox_days), never send tasks or events.
package accounts
