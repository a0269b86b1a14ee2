// Package dsn recognises delivery status notifications (bounces and delays) and feedback-loop reports
// (complaints) in raw RFC 5322 messages and reads from them what a caller needs to match the send they answer
// and to judge it: per recipient the action, the enhanced status code, the SMTP reply code, the diagnostic text
// and the rule that decided hard or soft, and the headers of the returned message.
//
// It is pure: no database, no network, no clock; the same bytes always give the same Report.
//
// Invariants:
//   - A message is a report only on strong evidence. A multipart/report with a message/delivery-status part
//     (RFC 3464) counts when at least one recipient failed or was delayed; Action delivered, relayed or
//     expanded never counts. A multipart/report with a message/feedback-report part carrying a Feedback-Type
//     (RFC 5965) is a complaint. Any other message counts as a bounce only when all three hold: it was sent by
//     mail software (a MAILER-DAEMON or postmaster sender, an empty Return-Path, or an Auto-Submitted header
//     other than "no"), its own text names a failed recipient in one of the known phrasings, and that text
//     carries an SMTP reply code or an enhanced status code. A person's reply, an out-of-office reply or a
//     message quoting or forwarding a bounce is therefore never a bounce.
//   - Only the message's own structure decides. A report inside an attached or forwarded message/rfc822 part
//     is never looked into for detection, only read for the returned message's headers; quoted lines ("> ")
//     are ignored in text forms.
//   - Input is bounded: at most MaxBytes of the message are read, at most maxParts MIME parts, maxDepth levels
//     of nesting and maxRecipients recipients; diagnostic text is cut to maxDiagnostic bytes. Malformed MIME
//     ends the walk where it breaks and never panics; what was read before the break still counts.
//   - Hard or soft is decided by the first rule that applies, stored as Recipient.Rule: Action delayed is soft;
//     mailbox full (x.2.2) is soft; otherwise the enhanced status class (5 hard, 4 soft), then the basic SMTP
//     code (5xx hard, 4xx soft), then Action failed (hard, RFC 3464 defines it as permanent).
package dsn
