// Package handlers implements the ogen-generated API: one struct per operation group (x-ogen-operation-group
// in openapi/), each with only the dependencies its area needs, embedded into Handler. Handlers stay thin:
// authorize, map the request, query or enqueue in one transaction, map the result.
package handlers
