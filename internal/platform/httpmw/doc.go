// Package httpmw holds the HTTP middleware every request passes through before any router sees it: the
// request id and request facts (RequestID), panic recovery (Recover), the body limit (LimitBodies), and the
// access log and metrics (Observe). It knows no route, credential or domain: the composition root
// (cmd/outflow/app) says how to name an operation and which paths take larger bodies.
package httpmw
