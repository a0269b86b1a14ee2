// Package campaignstats reads the campaign reports: one campaign's summary, steps and engagement, its days,
// its hours, and a comparison of campaigns over a date range.
//
// Invariants:
//   - Reports read the rollups (analytics_campaign_days, analytics_step_days, analytics_campaign_hours,
//     analytics_engagement) and small current-state rows of the campaigns named (the campaign, its steps, the
//     counts of its leads by primary key prefix); they never scan send_tasks or tracking_events, so a report
//     costs the same whatever the campaign's size.
//   - Counts of opens and clicks are of sends (each email counted once however often it was opened), as the
//     rollups keep them, except the summary's unique counts (People, from the leads' engagement counts) and
//     engagement, which count distinct contacts; every rate comes from package metrics over the send counts,
//     so a campaign's rates here, in the comparison and on the dashboard are one definition.
//   - Days and hours are UTC; a range's every day (or the date's every hour) is present, zero when nothing
//     happened. A range is at most MaxSpanDays days and never ends before it starts.
//   - A campaign of another organization is as unknown as one that never existed: 404 campaign_not_found.
package campaignstats
