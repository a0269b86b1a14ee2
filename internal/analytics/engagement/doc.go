// Package engagement records who engaged with a campaign, by country, mail client and device, in
// analytics_engagement (one row per campaign, dimension, key and contact, so the campaign report counts distinct
// contacts), and recomputes those rows from the source rows (Rebuild).
//
// Invariants:
//   - Only people count: a row is written for a human open, or a human click whose effects applied (a click
//     the burst rule may still re-judge a machine's is not a person's yet); machines' opens and clicks write
//     none. A click marks its rows clicked and counts as an open.
//   - The client and device are a pure function of the stored user agent (Classify): the mail-client rules of
//     this package first (Gmail and Yahoo image proxies, Outlook, Thunderbird, Apple Mail), then the browser
//     and device of the maintained parser github.com/medama-io/go-useragent. Devices are desktop, mobile or
//     tablet; anything else, and anything unrecognised, is the empty key (unknown).
//   - The country is resolved once, from the client address while the event is received (only a keyed hash
//     of the address is stored), through the operator's MaxMind DB country or city database (Geo); without
//     one every country is unknown. A database that does not open or holds no countries fails start.
//   - Writes are idempotent upserts in the caller's transaction, and Rebuild reads exactly what the writes
//     were made from (human verdicts, the stored country and user agent, the send's campaign and contact),
//     so a rebuild equals the rows kept incrementally.
package engagement
