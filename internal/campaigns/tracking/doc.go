// Package tracking is engagement tracking: the signed tokens in open pixels, tracked links and unsubscribe
// links (and the click identification ticket a redirect adds), the classification of each open and click as
// a person's or a machine's, the scanner and privacy-proxy network lists that classification reads, the
// Batcher that judges received events and writes them to tracking_events in the background with what they
// cause, and the deferred effects of human clicks (Clicks, run by ClickWorker). It serves no HTTP; the
// tracking handlers build on it.
//
// Invariants:
//   - A token validates without a database read: HMAC-SHA256 (truncated to 128 bits, compared with
//     hmac.Equal) over version, kind, organization, send task and, for a click, link index and original URL.
//     Each kind signs with its own key, derived from the deployment secret with HKDF-SHA256 and the info
//     "outflow/tracking/v1/<open|click|unsubscribe>"; previous secrets still verify, so a rotation does not
//     break links in messages already sent. Any token Parse will not honour is ErrInvalidToken, nothing more.
//   - Classification is a pure function of the event, the send's dispatch time, the source network and the
//     windows; it always names the rule that decided, and the rules apply in one fixed order (see Classify).
//   - Every event is judged in the transaction that stores it, so none is ever stored without its verdict and
//     rule; one organization's tracking writes take its tracking lock, so the burst rule sees every earlier
//     click and a send's first open or click moves its counters exactly once.
//   - Only people count: opened, clicked, opened_at, clicked_at, campaign.email_opened and .email_clicked
//     and the contact's activities follow human events only; an email opened only by machines counts once as
//     machine_opened until a human open upgrades it.
//   - Only a human click has effects, and only after the burst window plus one second (EffectsAt), through a
//     job enqueued with the click; a later click that makes a burst first re-judges it and its effects never
//     apply. The click identification ticket is never issued to a recognised or probable scanner network.
//   - A tracking event stores a keyed hash of the client address (IPHasher), its network and its country
//     (resolved on receipt), never the address; the Batcher never makes a handler wait on the database.
//   - People's opens, and people's clicks once their effects apply, record who engaged with the campaign
//     (engagement.Record) in the transaction that stores or applies them; machines' never do.
//   - The network lists are data files embedded at build time and parsed once at start; a malformed line
//     fails start rather than silently narrowing a list.
package tracking
