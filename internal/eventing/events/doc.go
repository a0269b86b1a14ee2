// Package events is Outflow's transactional outbox. A write that should tell the world something happened
// calls Outbox.Emit inside its own transaction: the event row and the River job that dispatches it commit
// (or roll back) with the change itself, so an event is never lost for a committed change and never sent
// for a rolled-back one.
//
// # Per-consumer delivery
//
// The dispatch job hands each event to the registered consumers (webhooks, the realtime gateway; later
// automations and integrations), and each consumer acknowledges each event on its own:
//
//   - A consumer handles an event in an organization-scoped transaction of its own whose first statement
//     claims it: it records the consumer's acknowledgement, a row (organization_id, event_id, consumer name)
//     of event_consumer_acks, and reads the event. What the consumer records (webhook deliveries and their
//     first attempts' jobs, a realtime notice) and its acknowledgement commit together or not at all: there
//     is no moment at which the effect is committed and the acknowledgement is not, or the reverse. A consumer
//     therefore keeps its effects inside that transaction (work outside the database goes through a job
//     enqueued there, as webhook attempts do).
//   - A dispatch attempt runs only the consumers with no acknowledgement yet, each in its own transaction,
//     and a failing consumer does not stop the others. A retry (River's, up to MaxDispatchAttempts) therefore
//     runs only the consumers that failed: one consumer's outage never repeats another's side effects. Two
//     runs of the same event at once (a rescued job beside a live one) serialize on the acknowledgement's
//     primary key; the second finds it committed and skips the consumer.
//   - The event is marked dispatched (dispatched_at) by the last consumer's claim, which checks that every
//     other consumer's acknowledgement is there, so the mark commits with that consumer's work; an attempt
//     cut after the last acknowledgement marks it at the next run. So n consumers cost n transactions and no
//     statement besides their claims (which replace the read and the mark of a single dispatch transaction):
//     for the two of today, one transaction more per event (BenchmarkDispatch in internal/eventing/delivery),
//     the price of one consumer's failure or hang never undoing another's work.
//   - Consumers are named (Consumer.Name). The name is stored in the acknowledgements, so it never changes: a
//     renamed consumer would run again for the events not yet dispatched. Adding a consumer makes it run for
//     those events too; events already dispatched are not handed to it.
//   - Effects are also keyed by the event id, so even a second call would not repeat them: a webhook delivery
//     is unique per (endpoint, event), and each instance's realtime hub drops an event id it routed recently.
//
// Two other designs were weighed. One River job per consumer per event would give the same guarantee (its
// completion written with JobCompleteTx in the consumer's transaction) at two or three times the jobs to
// insert, fetch and complete per event, and would spread one event's retries over several jobs. One shared
// transaction with a savepoint per consumer would save the extra commits, but a consumer cut at the timeout
// takes the connection, and so every other consumer's work, with it, and each consumer's row locks would be
// held while the next one runs.
//
// Each attempt, all of its consumers together, is cut at HandlerTimeout (30 s). Events and their
// acknowledgements are kept Retention (7 days): Prune deletes events, and their acknowledgements go with them
// (ON DELETE CASCADE), as with an organization's deletion. Acknowledgements and events are tenant rows under
// row-level security; every dispatch statement runs in the event's organization's scope (db.WithOrgTx).
package events
