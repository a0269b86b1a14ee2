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
//
// There is no global registry: the server builds one while it is wired, which keeps tests independent and
// makes a missing or duplicate tool a start-up error.
package tools
