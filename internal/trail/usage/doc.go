// Package usage keeps the request log of API keys (endpoint, method, source, status, latency) behind the
// usage summary, analytics and per-key logs, and the keys' last-use marks. Requests hand their entry to a
// bounded in-memory queue and return; a background writer stores the queue in batches, one transaction per
// organization. When Postgres falls behind and the queue is full, entries are dropped and counted rather
// than slowing requests down.
package usage
