// Package rollup keeps the analytics counter tables (analytics_org_days, analytics_campaign_days,
// analytics_step_days, analytics_campaign_hours, analytics_mailbox_days; migrations/00040_analytics.sql) as
// events happen, so a report reads a few hundred rows whatever the organization's size, and recomputes them
// from the source rows on demand (Rebuild, `outflow admin rollups rebuild`).
//
// What each counter counts (one per thing counted, on the UTC day and hour of the time named):
//   - sent: a send recorded as sent (send_tasks.status sent), on sent_at. Failed and ambiguous sends never
//     count; a send the pipeline took back would count -1 on the same day (the pipeline has no such path today).
//   - opens: a send opened at least once, by a person or a machine, on its first open's time (the earliest
//     tracking_events open of the send). machine_opens: of those, the sends whose opens so far are all a
//     machine's; a person's open later takes it back on the first open's day. An open arriving with a time
//     before the send's first moves both to the earlier day.
//   - clicks, machine_clicks: the same for clicks, by their verdict as stored: a human click counts as a
//     person's at once (its deferred effects change nothing here), and a pending human click a later burst
//     re-judges a machine's makes its send machine-only again unless another human click remains.
//   - replies: a send answered, on its first reply's time (send_tasks.replied_at, stamped once).
//   - intent_*: one per classified inbound message that answers a send (inbox_messages.intent set and
//     send_task_id known), on the message's received_at, machine replies (automated, out_of_office) included.
//   - bounces_hard, bounces_soft, complaints, unsubscribes: one per deliverability_events row of that type (the
//     recorder keys a report about a send by the send and its kind, so one send's report stored twice is one
//     row), on the event's time.
//   - placement_inbox, placement_spam: seed placements, fed by the warmup exchange when it lands (0 today).
//
// Attribution: a thing about a send (opens, clicks, replies, intents, and events that name a task) counts for
// the send's kind (campaign; direct and reply count as direct; warmup), campaign, step, A/B variant (the nil
// uuid without one), sending mailbox and that mailbox's provider. An event that names no send counts for the
// campaign and mailbox it names, kind campaign with a campaign and direct without.
//
// Invariants:
//   - Apply writes every counter table in one statement and only adds: a delta may be negative (an undo), a
//     row whose counters return to 0 may stay, and reports read sums. It runs in the transaction that makes
//     the change it counts, so the counters commit or roll back with it.
//   - Campaign rows (days, steps, hours) are written only for facts with a campaign that still exists, step
//     rows only with a step, mailbox rows only with a mailbox; a campaign deleted meanwhile takes its rows
//     with it and never aborts the caller's transaction.
//   - Rebuild computes exactly what the feeds add up to, from send_tasks, tracking_events,
//     deliverability_events and inbox_messages, in set-based SQL; the feeds read the same source rows back
//     (RollupSends, RollupEvents, RollupIntents) so both attribute alike. The tracking writer reads each send's
//     Engagement with the sends a batch names (TrackingTasks, the same grouping of its stored events) and
//     derives what the batch leaves from its judged events, so it reads nothing back after writing (Count).
//     What a rebuild cannot see (a send or mailbox deleted since) it cannot count.
package rollup
