// Package productevents records what a contact did in the customer's product (POST /v1/events) and resumes the
// campaign steps waiting for it (wait_for_event), and reads the recorded events back (GET /v1/events).
//
// # Invariants
//
//   - An event names an existing contact of the organization, by contact_id or by email (both: they must name
//     the same contact); an unknown contact is 404 contact_not_found and no contact is ever created.
//   - The name is lowercase dot-separated words (^[a-z0-9_-]+(\.[a-z0-9_-]+)*$, at most 255 characters),
//     occurred_at (now when absent) is at most five minutes ahead of the clock, data is a JSON object of at most
//     64 KiB. Every refusal is a 400 naming the field and the rule.
//   - An Idempotency-Key records an event once per organization: the row's UNIQUE(organization_id,
//     idempotency_key) stands behind the HTTP idempotency layer (which replays per credential for 24 hours), so
//     the same key from another credential or later answers the event first recorded, with the steps it resumed,
//     and resumes nothing again; the same key for another event (name, contact or data) is 422
//     idempotency_key_reused.
//   - Recording and resuming are one transaction: the event row, every wait_for_event step run open for the
//     contact and the event's name moved from waiting to resumed (one conditional UPDATE, so an event and the
//     wait's timeout, or two events, never both win), the resumed leads made due now, and the audit entry
//     commit together or not at all.
//   - Lists are newest received first, paged by a signed keyset cursor over (received_at, id).
package productevents
