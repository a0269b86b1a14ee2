// Package testrun sends a campaign's real messages to a test address before anyone else gets them: one step
// now (SendEmail, POST /campaigns/{id}/test-email), or the whole sequence (POST /campaigns/{id}/test), each
// email step composed by internal/campaigns/compose for the run's contact and handed to the send pipeline
// (sending.Enqueue) from the run's mailbox, one step at a time, with every wait compressed to a few seconds.
//
// A run is a row of campaign_test_runs whose steps column records each step's progress. A River job of kind
// campaign_test_step (Args) carries the run forward one step at a time:
//
//  1. It settles the previous step: an email step completes when its send task is sent and fails (failing the
//     run) when the pipeline fails it; a wait step completes. While the previous message is still queued the
//     job polls for a few seconds, then snoozes, so messages leave in order and a thread reply never arrives
//     before the message it answers.
//  2. It starts its own step in one transaction with everything that step causes: the message composed and
//     enqueued, the task id and Message-ID recorded, the next step's job inserted (scheduled after the
//     compressed wait). A retried job finds the step already started and sends nothing, so a crash between any
//     two statements never sends a step twice. The job after the last step completes the run.
//
// Rules:
//   - Waits are compressed: a step's wait_after (days) and a wait step's wait_minutes each last Runner's wait
//     (CompressedWait unless the deployment or a test says otherwise), whatever their length.
//   - Thread replies carry In-Reply-To (the run's latest message) and References (all of them, in order).
//   - An unresolved variable, a message with nothing to send, or a refused enqueue fails the step and the run
//     with an error {code, message, fix}; nothing of that step is sent.
//   - Test messages are direct sends (kind direct) tied to no campaign, step or contact, so campaign counters,
//     reply matching and a contact's timeline never mistake a test for the real thing. Like every direct send
//     they count toward the mailbox's daily cap and wait out its minimum gap.
//   - A wait_for_event step is a compressed wait: no product event reaches a test run, so it goes on as if
//     the event came. Campaigns with app_action steps are refused (400 campaign_invalid): an action would call
//     the customer's real app, and actions have no test mode.
//   - Cancelling a run cancels its step message still queued, and the jobs still scheduled find the run
//     cancelled and do nothing.
package testrun
