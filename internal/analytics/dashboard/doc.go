// Package dashboard builds the organization reports: the dashboard (GET /analytics/dashboard) and the usage
// overview (GET /analytics/usage).
//
// Definitions (the OpenAPI descriptions repeat them):
//   - Periods are UTC calendar days including today: the dashboard's 7d is today and the 6 days before (30d,
//     90d alike); usage's day is today since 00:00 UTC, week the last 7 such days, month the last 30. An
//     unknown period falls back to the default (7d, day) and is never refused.
//   - Totals count email steps only: they sum analytics_org_days of kind campaign over the period's days.
//     total_opens and total_clicks count sends opened or clicked by anyone (machines included),
//     machine_opens and machine_clicks the machine-only share, total_delivered is sends minus bounces, and
//     every rate is package metrics' (human opens, human clicks, sends answered and bounces over sends).
//   - daily_trend has one point per day of the period, oldest first, zeros on days without sends; its opens
//     and clicks count as the totals do.
//   - top_campaigns are the TopCampaigns campaigns with a send in the period, most replies first, then most
//     sends, then the newest; their rates are metrics' over the campaign's sums in the period.
//   - recent_activity is the newest RecentActivity entries of the campaign activity logs (what GET
//     /campaigns/{id}/logs lists), newest first: the log's primary key read backwards.
//   - Mailbox numbers (account_health, active_accounts, usage's email_accounts) come from package accounts'
//     statuses and follow the caller's mailbox scope; the buckets are exclusive by accounts.HealthOf's level.
//
// Invariants: reports read rollups and small current-state tables (campaigns, mailboxes, contact_stats, a
// primary-key range of today's contacts, the newest log entries), never send tasks or events.
package dashboard
