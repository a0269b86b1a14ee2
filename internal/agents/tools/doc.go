// Package agent is the tool registry AI agents use: named, schema-described tools, each running an API
// operation and gated by the scope of the route it mirrors. The REST surface (GET /ai/tools, POST
// /ai/tools/{name}/call) and the MCP endpoint (/v1/mcp) serve the same registry, so both list and run exactly
// the same things under exactly the same checks.
//
// There is no global registry: the server builds one while it is wired and each API area registers its
// tools into it, which keeps tests independent and makes a missing or duplicate tool a start-up error.
package tools
