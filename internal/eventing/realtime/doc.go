// Package realtime is Outflow's realtime gateway: a WebSocket endpoint (GET /v1/realtime) that carries the
// event vocabulary of the webhooks (events.Catalog) to connected clients, live, with per-connection intents.
// Unlike webhooks it is lossy on disconnect, with resume/replay from a recent event id.
//
// # Fan-out
//
// The Notifier is an event consumer (events.Consumer, named "realtime"): in its own transaction of each
// event's dispatch, the one that records its acknowledgement of the event, it calls pg_notify on the channel
// outflow_realtime, so the notice is delivered when that transaction commits and never for a rollback, and an
// event is announced exactly when the Notifier has acknowledged it. The notice carries the event id,
// organization, type, created_at, the routing fields read from the top level of the event's data (user_id,
// campaign_id, email_account_id, operation_id) and the data itself; when that would exceed NOTIFY's 8000-byte
// limit it carries only the id, organization and type ("fetch": true). Every API instance runs one listener on
// a dedicated connection (LISTEN outflow_realtime), started with the instance's first WebSocket connection,
// reconnecting with jittered backoff. It reads fetch-notices' events by id, and after a reconnect the events
// announced while it was away, only for organizations with local connections and always in an
// organization-scoped transaction (db.WithOrgTx), so row-level security holds as for any request. It routes
// each event once (a window of recent ids drops repeats) to the instance's connections of the event's
// organization.
//
// # Connecting
//
// Authenticate like the API: `Authorization: Bearer <token>`. Browsers, which cannot set headers on a
// WebSocket, offer the token as a subprotocol beside the protocol's: `Sec-WebSocket-Protocol: outflow.v1,
// bearer.<token>`; the server always selects outflow.v1 and never echoes the token. Tokens are never read
// from the URL. A session picks its organization with X-Organization-Id or `?organization_id=` (an id, not
// a secret); otherwise its token's. API keys and OAuth tokens need the REALTIME_SUBSCRIBE scope; sessions
// need membership of the organization (any role). Refusals come before the upgrade, as the API's error
// envelope: 401 (no or bad credential), 403 (missing scope, not a member), 426 (not an upgrade request),
// 429 (the credential's rate limit; opening a connection counts as one request), 503 (the gateway is not
// connected to the database yet; Retry-After). Every minute the credential is verified again; a revoked or
// expired one closes the connection with 4003, so a session client reconnects with a fresh access token.
//
// # Protocol (subprotocol outflow.v1)
//
// Every frame is a JSON text message with a "type". The server speaks first:
//
//	{"type":"ready","organization_id":"<org>","user_id":"<user>"}   (user_id absent for keys without a user)
//
// The client states its intents:
//
//	{"type":"subscribe","request_id":"r1","topics":["org:<org>"],"events":["role.*"],"last_event_id":"<id>"}
//	{"type":"unsubscribe","request_id":"r2","topics":["org:<org>"],"events":["role.*"]}
//	{"type":"ping","request_id":"r3"}                                  -> {"type":"pong","request_id":"r3"}
//
// Topics are user:<id> (only the connection's own user), org:<id> (only its own organization),
// campaign:<id>, account:<mailbox id> and bulk:<bulk operation id>; events are routed only within the
// connection's organization, so an id of another organization matches nothing, and a mailbox-scoped API key
// may name only its own mailboxes. An event is published on org:<its organization> and on the topic of each
// routing field its data carries. Event filters are exact types ("campaign.email_opened"), families
// ("campaign.*") or "*"; with none, every event except the firehose ones, which (as for webhook endpoints)
// must be listed by exact type. Intents accumulate across subscribe frames (at most 100 topics and 100
// filters); unsubscribe removes them. A frame is accepted or refused whole.
//
// The server acknowledges each accepted frame with the connection's intents after it:
//
//	{"type":"ack","request_id":"r1","topics":["org:<org>"],"events":["role.*"],"replayed":2}
//
// and refuses one with an error frame, the connection staying open:
//
//	{"type":"error","request_id":"r1","code":"forbidden_topic","message":"..."}
//
// Codes: invalid_frame, unknown_frame_type, invalid_topic, forbidden_topic, invalid_event_filter,
// too_many_subscriptions, invalid_last_event_id, resume_not_allowed, resync_required, replay_failed.
//
// Events have the fields of a webhook delivery body:
//
//	{"type":"event","id":"<event id>","event_type":"role.created","organization_id":"<org>",
//	 "created_at":"...","data":{...}}
//
// A connection receives an event when one of its topics matches, its filters admit the type, and its
// credential may see the event's family: for API keys and OAuth tokens the family's scope of part 1's table
// (events.Info.Scope; a mailbox-scoped key also only its mailboxes' events), for sessions the organization
// permission of the API routes that read the same data (campaign, deliverability, meeting and mailbox
// events: view_campaigns; contact, bulk and CRM: view_contacts; inbox: access_unibox; team, role, settings
// and subscription: view_analytics, as the audit log; automation: use_integrations; custom.event: any member).
//
// # Resume
//
// Event ids are uuid v7 and sort by creation time. A client that reconnects sends the id of the last event
// it received as last_event_id in its first subscribe frame. The ack (with "replayed": n) is followed by the
// organization's announced events after that id that the new intents admit, oldest first, marked
// "replay": true, then by live events; none is sent twice across the seam (live events wait while the replay
// runs and live copies of replayed ids are dropped). A resume covers at most 1000 events and 24 hours: beyond
// either the ack is followed by a resync_required error (reload state through the API, then subscribe
// without last_event_id); live events flow either way.
//
// # Back-pressure and closing
//
// Each connection has a bounded send buffer (256 frames). The fan-out never waits for a client: one whose
// buffer is full is closed with 4001 (too slow) and resumes on reconnect. Other close codes: 1000 normal,
// 1001 server shutting down, 1009 a client frame over 64 KiB, 4003 credential no longer valid.
package realtime
