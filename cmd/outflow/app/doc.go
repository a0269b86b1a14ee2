// Package server builds Outflow's HTTP surface: the middleware every request passes through (request id,
// panic recovery, access log and metrics, body limit, authentication, idempotency), the ogen API mounted
// under /v1 with its errors wired to the one envelope, and the unauthenticated /healthz and /metrics.
package app
