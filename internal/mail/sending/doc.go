// Package sending is the send pipeline every sender goes through (direct sends, unibox replies, campaigns,
// warmup): a send task row is written before anything reaches SMTP, one River job works it, and it ends in
// exactly one result.
//
// The life of a task:
//
//   - Enqueue writes the task (status queued, with its deterministic Message-ID <task id@sender domain>) and
//     its job in the caller's transaction, so a rolled-back request leaves neither.
//   - An attempt claims the task in one transaction that also locks the mailbox row, so attempts on one
//     mailbox are serialised across every worker process; attempts on one mailbox that arrive in a process
//     while a claim runs are claimed together in the next one. There the mailbox's daily cap (campaign_limit,
//     counted per mailbox-local day) and minimum gap (min_wait_time) are checked and charged for capped kinds
//     (campaign and direct sends; replies and warmup are exempt): a task that would break either waits, queued,
//     until it would not. No caller can exceed them because no caller sends any other way.
//   - The claim reserves; the hand-over is per message. On the mailbox's pooled connection, once the message
//     is written and just before the final dot that hands it to the server, the attempt marks its task handed
//     over (handed_over_at): a crash before the mark leaves a message the server discards (sent again), after
//     it one that may have left. When the server accepts, the attempt lets the connection go and writes
//     accepted_at at once, ahead of the rest of the result; the next mark on the connection writes it too when
//     it is still missing. So per mailbox session at most one message is ever handed over with no answer
//     written: all a crash can leave ambiguous. The rest of an accepted message's result is written beside the
//     next message's SMTP transaction.
//   - The result is written after the server answers, guarded by the claiming attempt: sent (the Message-ID we
//     wrote), failed with a code and message (a permanent rejection, or the fifth transient failure), queued
//     again with backoff (a transient failure before the message was handed over), or ambiguous when the
//     connection broke after the message was handed over and before the server answered. A failed or retried
//     send gives its place in the day back.
//   - A task found claimed by a later attempt (the worker died) is sent again when it was never handed over
//     (its day's place given back and charged anew), recorded as sent when the server's acceptance was
//     written, and marked ambiguous otherwise: never sent again blindly, since a duplicate to a prospect is
//     worse than a late send.
//   - An ambiguous task is settled from the mailbox's Sent folder (CheckOutcome, SentFolderDelay later): its
//     deterministic Message-ID found there, it was sent; absent from a server known to file what it sends, it
//     never left and is sent again; otherwise (a server that files nothing, or a folder out of reach after a
//     few tries) it is listed for a person (GET /emails/{id}/unsettled-sends), who resends or skips it (Decide).
//     A campaign lead waits on its ambiguous send until then; a skipped one moves it on without counting.
//   - Sent mail is copied to the Sent folder where the server does not file it (FileCopy): whether it does is
//     learned from the first sent message looked for there (mailboxes.sent_copies), never guessed from the
//     domain; the copy is \Seen, made once per message (a copy already there is not appended again), and
//     never made of warmup mail.
//   - A mailbox that is not active, a suppressed recipient, or (for campaign and warmup mail) a domain that has
//     failed authentication for longer than the grace period fails the task before anything is sent.
//   - Every result (sent, failed, ambiguous; not a requeue) is told to the settle hook (OnSettle) inside the
//     transaction that records it, so the campaign engine's view of the send commits with the result; a sent
//     result counts in the analytics rollups (rollup.Sent) in that transaction too.
//   - A task with an unsubscribe URL (campaign sends whose unsubscribe_header is on; the engine signs it) goes
//     out with `List-Unsubscribe: <https URL>, <mailto:FROM?subject=unsubscribe>` and, when the URL is https,
//     `List-Unsubscribe-Post: List-Unsubscribe=One-Click` (RFC 8058, RFC 2369). The mailto target is the
//     address the message is sent from: a client that prefers mail sends the request to the sending mailbox,
//     where it is synced with the mailbox's other mail and seen by whoever reads it. No other kind of send
//     carries the headers.
//   - Account-level conditions (authentication refused, account disabled, rate limited, server errors) are
//     raised in addition to the task's result: an entry in the mailbox error log and an email_account.error
//     event.
package sending
