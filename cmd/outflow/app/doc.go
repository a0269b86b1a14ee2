// Package app is Outflow's composition root: New builds every component of a process once (pool, keyring,
// system mail, captcha, mail dialer and credentials, the job inserter, webhook delivery, the River workers,
// the realtime gateway, the usage recorder, the ogen servers) and hands them to the HTTP surface and the
// workers. `outflow serve` runs it; handlers/apitest builds the same for tests. The HTTP surface is the
// middleware of internal/platform/httpmw, the credential gate, the ogen API mounted under /v1 with its
// errors wired to the one envelope, and the unauthenticated /healthz and /metrics.
package app
