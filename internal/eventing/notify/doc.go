// Package notify tells people what happened: the one producer API every area calls when an event concerns a
// user (a reply arrived, a mailbox bounced, someone signed in), honouring that user's notification preferences.
//
// An event of a category the user disabled is dropped. Otherwise each enabled channel gets it: in-app as a row
// of the user's feed, email through the system mail sender and push to the user's registered devices. Email and
// push are batched per user and channel: the first event after a quiet stretch goes out at once, and the events
// that follow within the window (the user's email_digest_minutes for email, PushWindow for push) arrive as one
// summary when the window ends, so a burst of bounces is one message, not fifty. Slack is a stored preference
// only until a Slack integration exists.
//
// Producing happens inside the caller's transaction (Notifier.NotifyTx): the feed row, the pending deliveries
// and the River job that will send them commit or vanish with the caller's own change. Sending happens later,
// in the job (Deliverer.Deliver), never inside a request.
package notify
