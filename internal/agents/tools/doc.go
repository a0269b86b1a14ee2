// Package tools is the tool registry AI agents use: named, schema-described tools, most of them one API
// operation each. The REST surface (GET /ai/tools, POST /ai/tools/{name}/call) and the MCP endpoint (/v1/mcp)
// serve the same registry, so both list and run exactly the same things under exactly the same checks.
//
// Invariants:
//   - A tool's input schema is derived from the contract (Derive, run by `make generate` into gen/toolspec),
//     never written by hand: the operation's path, query and Idempotency-Key parameters and its JSON body's
//     fields, with the contract's required lists.
//   - A tool call is the operation's own HTTP request (Definition.Dispatch) served by the server's whole
//     request path as the caller, so validation, scopes and permissions, mailbox limits, idempotency and the
//     agent-policy gate apply to it exactly as to the REST call; the registry adds only the schema check and
//     the scope filter (Allowed), which never admits more than the route does.
//   - Only operations a handler implements are tools; the server wiring decides that, with the route table.
//   - A tool's hints (Hints) are declared once, on the operation in the contract (x-agent-hints), and copied
//     from there to MCP (readOnlyHint, destructiveHint, idempotentHint, openWorldHint) and GET /ai/tools
//     (read_only, destructive, idempotent, open_world); Derive refuses an operation without them.
//   - Hints never decide who may call a tool: the route's scope does (Allowed). A read-only API key sees a
//     read-only POST because its route asks for a read scope, and the server's tests hold every tool such a
//     key may call to be hinted read-only.
//
// The hints are decided by what the operation does, not by its method:
//   - read_only: the call changes nothing: no row, job or event, and nothing sent that acts on the world
//     (a DNS lookup, an SMTP login or RCPT probe without a message, or a signed ping its receiver must not act
//     on change nothing). Every GET is read-only, and so is a POST that only searches, estimates, renders,
//     validates, tests or looks up (contacts_search, campaigns_estimate, campaigns_template_preview,
//     campaigns_validate, mailboxes_verify_address). A POST that stores its result (a preflight report, a
//     quote, a verification state) is not. It is written {read_only: true}, which implies not destructive
//     and idempotent; every other operation states all three.
//   - destructive: the call may delete something, overwrite values people set (an update, a replacement, an
//     upsert), or end something that cannot be resumed (a cancel, a warmup stop that discards the ramp, a
//     secret rotation, a move to trash). Every DELETE is. Creating, sending, recording, adding members, and
//     moving between states that another call moves back (pause and resume, hold and release, snooze, stop
//     and start of a campaign) are not.
//   - idempotent: calling again with the same arguments has no further effect: reads, PUT, DELETE, updates
//     that set values, adds with set semantics and moves to a named state are; creating, sending, queueing
//     a run, retrying and rotating are not. An Idempotency-Key makes a creating call idempotent only where
//     the contract requires the key (the same arguments then carry the same key, and the first answer is
//     replayed: product_events_create, runs_create, managed_mailboxes_provision); an optional key does not,
//     since a caller may leave it out.
//   - open_world: calling the operation makes Outflow reach a system or person outside itself, at once or
//     as the direct result of the call. It is written `open_world: true` beside the other hints, and only
//     when true: an operation without it stays inside Outflow. It is true when the call sends or queues
//     mail (direct sends, inbox replies and new messages, test sends and test runs, the resend of an
//     unsettled send); sets mail going to people (starting or resuming a campaign, by its start, a PATCH
//     to active or a run; resuming a held lead; starting or resuming warmup, also by a mailbox PATCH;
//     releasing a held mailbox or reactivating one; adding leads to a campaign that sends, at every entry
//     point of the lead gate: contacts written with campaigns or coming to match a linked segment, segment
//     pins, filters and links; a product event that resumes waiting leads); connects to a mail server or a
//     mail provider's API (a mailbox connected or tested, a send-as refresh, a read or a move relayed to
//     the mailbox's IMAP server); looks something up in DNS (tracking-domain and SPF/DKIM/DMARC checks,
//     address verification by MX and SMTP probe, the verifier's readiness, the host of a webhook or app
//     URL checked against the egress rules); or calls another service over HTTP (a webhook challenge or
//     redelivery, an app connection's test, an app action retried, contact research, a managed-mailbox
//     provider's catalog, quote or order). A read of Outflow's own data is closed, and so is a write that
//     only changes what Outflow stores or stops something (a stop, pause, hold, cancel or delete) and an
//     edit of what a running campaign sends (steps, variants, settings), which sets no new mail going.
//     Events a write raises reach the organization's webhooks whatever the write was, so they do not
//     count. A read-only operation may be open world (a DNS check writes nothing), and so may a GET
//     (GET /unibox/{id} relays the read to the mailbox's server).
//
// Derive also holds each declaration to the method's own meaning (HTTP semantics): a GET is read-only, a
// DELETE is destructive and idempotent, a PUT is idempotent.
//
// There is no global registry: the server builds one while it is wired, which keeps tests independent and
// makes a missing or duplicate tool a start-up error.
package tools
