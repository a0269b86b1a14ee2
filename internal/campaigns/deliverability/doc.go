// Package deliverability records what comes back from a recipient's side about a campaign send, bounces and
// complaints, with the evidence that decided each, and applies what follows from it: the lead, the address's
// suppression, the events, the notifications and the campaign's rolling bounce and complaint rates.
//
// Every path goes through one Recorder.Record: a bounce or complaint report synced from the sending mailbox
// (Recorder.Inbound, told by the engine's inbound hook; dsn.Parse read it in the mail sync), a recipient the
// recipient's server refused during the send (the engine's settle hook, source pipeline) and an event posted by a
// provider or an integration (MatchRecipient, then Record, source ingest).
//
// # Matching
//
// A send's Message-ID is <{task id}@{sender domain}> (sending.MessageID), so a report names its send by the
// returned message's headers: its Message-ID (matched_by message_id), or, when the report returned none, its
// In-Reply-To and then its References, newest first (matched_by original_headers: the send the returned message
// answered, of the same conversation and lead). The send must be a campaign send of the organization that was
// handed over, and the report must name its recipient (Final-Recipient or Original-Recipient, the feedback
// report's Original-Rcpt-To, or the returned To). A report that matches no send records nothing: it is about
// mail Outflow did not send (a person's own mail from the mailbox) or names a recipient that is not the send's,
// and counting it would suppress or pause on evidence that is not ours; the message stays in the inbox. A delay
// report (the server is still trying) records nothing either: the send may yet arrive, and sending it again
// would duplicate it.
//
// # Invariants
//
//   - Every recorded event is one deliverability_events row carrying its evidence: bounce type, enhanced status
//     and SMTP codes, diagnostic text, reason class, feedback type, how it was matched, the report's shape or
//     the provider, and the synced message it came in. Events about a send are keyed by the send (one row per
//     send and kind) unless the caller brings its own idempotency key; a key recorded before records nothing.
//     Each bounce, complaint and unsubscribe row counts in the analytics rollups (rollup.Events) as it is written.
//   - Effects apply once per send and kind: only the first hard bounce, soft bounce or complaint recorded about a
//     send moves its lead, raises events, notifies and is judged; a later one (another path's report of the same
//     send) is kept as evidence only. A rate counts distinct sends.
//   - A hard bounce stamps the send's bounced_at and stops its lead as bounced (Leads.Bounced; the pipeline's
//     rejection was applied to the lead by the engine's settle before it is recorded); with the campaign's
//     bounce_pipeline enabled and auto_suppress_on_bounce, the address is suppressed (source bounce). A soft bounce
//     has the lead's step sent again within its attempt limit (Leads.Bounced); it suppresses nothing, notifies
//     no one and is not counted in the bounce rate, which counts hard bounces. A complaint stops the lead
//     (Leads.Complained) and, with auto_suppress_on_complaint, suppresses the address (source complaint).
//   - Events: deliverability.bounce or deliverability.complaint for every event recorded with effects, and
//     campaign.email_bounced for a campaign send's bounce. Notifications: health_bounce for a hard bounce and
//     health_complaint for a complaint, to the campaign's owner, else the organization's owners and admins.
//   - After a hard bounce or a complaint the campaign's rate of that kind over its sends of the last
//     rateWindow is judged once it has minSample sends: entering the early-warning band (warningBandShare of the
//     threshold) raises campaign.deliverability_warning; reaching the threshold pauses an active campaign with
//     the reason stated (campaign.paused and the audit entry through campaign.Store.Move, the campaign_paused
//     notification) when bounce_pipeline enables it and auto_pause_campaign_on_spike is on.
//   - Everything happens in the caller's transaction: the report's message, the send's result or the ingest
//     request commits or rolls back with all it caused. Locks are taken in the order the engine takes them: a
//     queued send, then the lead, then the campaign.
package deliverability
