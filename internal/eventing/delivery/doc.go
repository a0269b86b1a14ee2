// Package delivery sends the organization's events to its webhook endpoints: signed, retried, inspectable.
//
// Two halves, joined by webhook_deliveries rows and River jobs:
//
//   - Consumer is an events.Consumer (named "webhooks"). In its own transaction of each event's dispatch, which
//     also records its acknowledgement of the event (so a retried dispatch never runs it twice), it picks the
//     endpoints that want it (enabled and verified; the endpoint's event types, where an empty list means every
//     non-firehose event and a firehose event must be listed; for an OAuth app's managed endpoint the app's
//     declared events instead, and the organization's live grant must hold the event family's scope), applies
//     the rate limits, and records one pending delivery per endpoint together with the River job of its first
//     attempt: the first attempt starts as soon as that transaction commits, and one rolled back leaves nothing
//     behind (and no acknowledgement: the retry runs the consumer again). Deliveries are unique per (endpoint,
//     event), so the event id keys the effect as well.
//   - Deliverer works the attempt jobs (queue QueueName). An attempt claims its delivery in a short
//     transaction (due, or in flight past its lease; a claim that misses means another worker or a newer
//     lifecycle owns it, so duplicate jobs and several worker processes never deliver twice), POSTs the
//     payload outside any transaction, and records the outcome in a second one together with the next
//     attempt's job. A process that dies mid-attempt leaves the delivery in flight with a lease; once the lease
//     runs out the periodic Sweep (or River's own retry of the job) tries it again.
//
// Decisions. Part 1 fixes the timeout, the retries, the backoff and the excerpt; the rest is ours:
//
//   - Retries: 2xx is delivered; anything else (3xx included, redirects are never followed), a connection
//     error or the 15 s timeout is a failed attempt, retried after 30 s doubling per attempt and capped at one
//     hour (30 s, 1 m, 2 m, 4 m, 8 m, 16 m, 32 m); the 8th failed attempt abandons the delivery. An attempt is
//     counted when it is claimed, so one cut short by a crash counts too.
//   - Signatures are computed on every attempt, with the secret of the generation the delivery was created
//     under (the endpoint's current or previous secret, so a rotation never breaks a delivery under way; a
//     redelivery starts over with the current one); an OAuth app's managed endpoints sign with the app's current
//     webhook secret, and their host is checked against the app's allowed_webhook_domains before every attempt
//     (a refusal is a failed attempt). Every attempt also re-checks the URL with egress.ValidateURL, and the
//     egress client checks the address it connects to.
//   - Rate limits, in fixed one-minute windows (DefaultLimits): 600 events a minute per endpoint and 6,000
//     events of one type a minute per organization. Events beyond them get no delivery row; they are counted
//     per window in webhook_throttle_drops (GET /webhooks/throttle-drops) and cannot be redelivered. The
//     counters are split in 16 shards so concurrent dispatches of one organization do not queue on one row.
//   - Endpoint health: a 2xx resets consecutive_failures and failing_since; a failed attempt extends the run.
//     An endpoint with no success for DisableAfter (24 h) and at least DisableMinFailures (20) failed attempts
//     in a row is disabled (disabled_reason says why) and the organization's owners and admins are notified
//     (category health_worker_downtime). Re-enabling is manual. Deliveries of a disabled or unverified endpoint
//     are abandoned at their next attempt, without a request.
//   - Isolation: attempts run on their own queue with QueueWorkers workers per process. At most
//     MaxInFlightPerEndpoint attempts may hang (run for over SlowAttempt) against one endpoint at once; more
//     wait (BusyWait), so a receiver that hangs for the whole timeout holds a quarter of the workers at most,
//     while a healthy receiver, whose attempts end before they count as slow, is never held back.
package delivery
