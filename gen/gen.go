// Package gen holds generated code only: gen/api is ogen's output for openapi/ (the server interfaces and the
// Go SDK), gen/db is sqlc's output for queries/, gen/toolspec the agent tool definitions derived from
// openapi/ (internal/agents/tools/toolgen). Run `make generate`; never edit any of them by hand.
package gen
