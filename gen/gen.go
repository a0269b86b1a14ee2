// Package gen holds generated code only: gen/api is ogen's output for openapi/ (the server interfaces and the
// Go SDK), gen/db is sqlc's output for queries/. Run `make generate`; never edit either by hand.
package gen
