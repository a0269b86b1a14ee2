// Package engine is the sequence engine: it decides which lead of an active campaign gets which step from which
// mailbox and when, hands the sends to the send pipeline, and applies each send's result back to its lead.
//
// # A planning pass
//
// A periodic job (Args, every Interval) runs RunDue: campaigns_due lists the campaigns with a lead due, and each
// is planned in one transaction of its organization (Pass):
//
//   - The campaign row is locked FOR UPDATE SKIP LOCKED, so one worker plans a campaign at a time and other
//     workers take other campaigns; due leads are locked the same way.
//   - Campaign-wide gates first: end_date passed (completed), start_date to come, outside every window of the
//     campaign's week in its zone (schedule.Week.Next, DST-correct), the day's sends at daily_limit or the ramp's
//     allowance. A gate parks the campaign until the moment it lifts, with the reason (see the park below).
//   - Then each due lead in the campaign's order (follow-ups or new leads first, contact_order_by/dir): held,
//     unsubscribed, suppressed or a refused verdict, unverified (asks the Verifier), sequence done, entry delay,
//     the step's delay from the one before (last_step_at), the step's condition, send-time optimisation, the new-
//     lead quota, a free sender (ChooseSender: rotation, ESP match, the thread's own mailbox, the mailbox's cap,
//     gap and plan), the variant (ChooseVariant, promoted winners first), the message (compose.Compose). A
//     pass reads no more leads than the campaign can still send today (its remaining sends less the leads lined
//     up for a busy sender's coming slot); when they are all taken, or every sender of the pool has its day's
//     cap taken, the campaign parks until tomorrow (or the first sender's new day).
//   - The sends go to sending.EnqueueMany in the same transaction, one call per pass; the leads, their
//     conversations' Message-IDs, the mailboxes' plans (mailbox_plans) and the campaign's day counters are written
//     with them. A rolled-back pass enqueued nothing and moved nothing.
//
// # Invariants
//
//   - Every decision is a function of the stored state and the engine's clock (Options.Now); the send pipeline
//     takes the same clock in simulations (sending.Pipeline.WithClock).
//   - A lead with a send in flight (task_id set) is never due: its next step waits for the result.
//   - A step is stamped when enqueued (part 1's rule 2): the lead's position advances and the campaign's day is
//     charged. The settle hook (Settle, told by the pipeline inside the transaction recording each result) keeps
//     the advance when the message was handed over (sent counts only then), and undoes it when the send failed:
//     the step is due again after retryBackoff, the day and the mailbox plan get the send back, the activity log
//     says why, a completed campaign reopens, and the lead fails after task_reliability.max_attempts (5). A
//     recipient the server rejected is a bounce: the lead stops at once, and the deliverability recorder
//     (package deliverability, built by New with the engine as its Leads) records it with its evidence,
//     suppresses the address, raises campaign.email_bounced and judges the campaign's rolling bounce rate.
//   - Bounces and complaints reported after a send was handed over (reports synced from the mailbox, which
//     Replied hands to the recorder and never takes for replies; events a provider posts) reach the lead through
//     Bounced and Complained: a hard bounce fails it as bounced, a complaint completes it, both cancelling its
//     queued send; a soft bounce of its latest step sends that step again, within the attempt limit.
//   - The mailbox's daily cap and minimum gap are enforced by the pipeline's claim for every sender (campaigns,
//     direct sends, warmup); the engine plans around them (mailbox_plans) so it does not enqueue what would only
//     wait there, and every wait has a reason.
//   - Every lead that is not finished has a due_at or a task in flight, or is held; a waiting lead carries a
//     wait_reason a person can read (the Reason constants), shown by GET .../leads/{contactId}/hold.
//   - A park is one write to the campaign (parked_before, parked_until, parked_reason), not one per lead: the
//     leads due at or before parked_before wait until parked_until with its reason (campaign.LeadWait reads them
//     so), and campaigns_due and the due leads' read skip them until then. A lead made due later (a retry, a new
//     lead, a follow-up) is after the park and is looked at; a place given back (a cancelled or failed send) or
//     a changed schedule ends the park. Waiting leads are not rewritten day after day.
//   - app_action and wait_for_event steps run through campaign_step_runs, one row per lead and step whose id
//     stays the same across passes, job retries and manual retries. An app action's call is made by its
//     AppActionArgs job (package apps) outside any transaction; its outcome (FinishAppAction) captures the
//     answer in the lead's app values (the templates' .App) and makes the lead due, and the pass goes on, or
//     routes a failure by on_error: stop fails the lead (app_action_failed), continue goes on, block keeps
//     the lead waiting until RetryStepRun. A wait_for_event waits until its timeout; ResumeWaits (POST
//     /events) resumes it first, or on_timeout continues or stops the sequence. Resume and timeout are each
//     one conditional update of a waiting run, so only one wins; a lead waiting at either step keeps a due
//     time (the look again, the timeout), so its campaign never completes under it.
//   - A campaign whose last lead finished completes (campaign.completed), a continuous one records idle_since; a
//     completed one that gains a lead by any path (restart_due, set by the lead trigger) restarts after the launch
//     checks, or logs restart_refused and leaves its new leads for a person to start.
package engine
