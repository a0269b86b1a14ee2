// Package apps connects campaigns to the customer's own app: the organization's app connections (a name, an
// HTTPS base URL and a signing secret) and the signed calls an app_action step makes to them.
//
// # Calls
//
// Every call is a POST with Content-Type application/json, X-Service-Event (app.ping or app.action),
// X-Service-Event-Id and Idempotency-Key (the same id: the step run id for an action, stable across the
// engine's passes, job retries and POST /campaigns/{id}/step-runs/{runId}/retry), and X-Service-Signature
// `t=<unix>,v1=<hex>`, HMAC-SHA256 of `<unix>.<raw body>` keyed with the connection's secret: the webhook
// scheme, signed by package webhook's Sign, so a receiver verifies both alike. An action's answer must be a
// 2xx JSON object of at most 64 KiB (MaxAnswer; one more byte is read to tell a larger one) within 30 s
// (Timeout); anything else (no answer in time, another status, an array, null, invalid JSON, a larger body)
// is a failure with code app_action_failed, which the step's on_error routes (see package engine).
//
// # The app_action job
//
// The engine starts a step run (running) and enqueues engine.AppActionArgs in its pass's transaction; the
// Worker (Actions.Run) reads the run, its step and its connection in one transaction, makes the call outside
// any transaction, and records the outcome with engine.FinishAppAction in another, completing its job there.
//
// # Invariants
//
//   - Every call goes through package egress's client: https only, a host that resolves to public addresses
//     (checked when the URL is stored, again when it is called, and for each address as it is connected to),
//     no proxy, no redirects followed.
//   - A secret is shown once, on create and on rotate; it is stored sealed (package seal, bound to its
//     connection), never logged, never in an audit entry. A rotation replaces it: the next call is signed with
//     the new one only.
//   - A connection's name is unique in its organization ignoring case (409 app_connection_name_taken); a
//     connection an app_action step names cannot be deleted (409 app_connection_in_use), and a step can name
//     only a connection of its organization (checked, and the connection locked, where steps are written).
//   - A connection test always answers: what it found (dns, tls, connection, authentication, status,
//     latency) and, without a 2xx answer to the ping, why and what to change (app_connection_failed).
package apps
