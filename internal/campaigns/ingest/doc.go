// Package ingest applies the deliverability events a provider or an integration posts
// (POST /v1/deliverability/events): a bounce, a complaint, an unsubscribe, an open, a click or a reply about a
// recipient address, optionally naming the send, the campaign or the contact.
//
// # Invariants
//
//   - An event goes through the path that owns its kind, so it has the effects the same event has when
//     Outflow sees it itself: a bounce or complaint through the deliverability recorder (suppression, the lead,
//     the rates and the auto-pause); an unsubscribe through the unsubscribe service (source action); an open
//     or click of a named send through the tracking classifier, which judges it by the same rules (a report
//     without the reader's user agent is a machine's, by rule missing_user_agent); a reply to a named send
//     through the engine's reply matching.
//   - Every event is one deliverability_events row (source ingest) with the provider, the reason and the
//     metadata, written in the transaction that applies it; an open, click or reply that names no send is
//     that row alone (nothing to apply it to).
//   - The idempotency key (the body's idempotency_key, else the Idempotency-Key header) records an event once:
//     a repeat changes nothing and is accepted all the same.
//   - The send, campaign and contact named must be the organization's (404 otherwise) and agree with the
//     recipient address (400 naming the field).
package ingest
