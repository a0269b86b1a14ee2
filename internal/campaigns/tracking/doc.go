// Package tracking is the pure core of engagement tracking: the signed tokens in open pixels, tracked links
// and unsubscribe links, the classification of each open and click as a person's or a machine's, and the
// scanner and privacy-proxy network lists that classification reads, and the Batcher that writes received
// events to tracking_events in the background. It serves no HTTP; the tracking handlers build on it.
//
// Invariants:
//   - A token validates without a database read: HMAC-SHA256 (truncated to 128 bits, compared with
//     hmac.Equal) over version, kind, organization, send task and, for a click, link index and original URL.
//     Each kind signs with its own key, derived from the deployment secret with HKDF-SHA256 and the info
//     "outflow/tracking/v1/<open|click|unsubscribe>"; previous secrets still verify, so a rotation does not
//     break links in messages already sent. Any token Parse will not honour is ErrInvalidToken, nothing more.
//   - Classification is a pure function of the event, the send's dispatch time, the source network and the
//     windows; it always names the rule that decided, and the rules apply in one fixed order (see Classify).
//   - Only a human click has effects, and only after the burst window plus one second (EffectsAt); the
//     click identification ticket is never issued to a recognised or probable scanner network.
//   - A tracking event stores a keyed hash of the client address (IPHasher) and its network, never the
//     address; the Batcher never makes a handler wait on the database.
//   - The network lists are data files embedded at build time and parsed once at start; a malformed line
//     fails start rather than silently narrowing a list.
package tracking
